package main

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// pollTimeout bounds the wait for one change to reach the kernel; the
// first sync of 10,000 Services takes a while on a busy machine.
const pollTimeout = 5 * time.Minute

// pollInterval is short: it is the resolution of the latency figures.
const pollInterval = 2 * time.Millisecond

// kernel reads rules in the node namespace over netlink.
type kernel struct {
	conn  *nftables.Conn
	table *nftables.Table
}

func openKernel(t testing.TB, env *e2e.Env) *kernel {
	c, err := nftables.New(nftables.WithNetNSFd(env.Lab.Node.FD(t)))
	if err != nil {
		t.Fatalf("netlink: %v", err)
	}
	return &kernel{conn: c, table: &nftables.Table{Name: "kube-proxy", Family: nftables.TableFamilyIPv4}}
}

// chainOf is the chain of Service i's port (docs/ruleset.md).
func chainOf(i int) string {
	return fmt.Sprintf("service-%s/%s/tcp/http", e2e.Namespace, name(i))
}

// has reports whether a rule of chain loads ip (the DNAT target).
func (k *kernel) has(chain string, ip netip.Addr) (bool, error) {
	rules, err := k.conn.GetRules(k.table, &nftables.Chain{Name: chain, Table: k.table})
	if err != nil {
		return false, err // also while the chain does not exist yet
	}
	want := ip.AsSlice()
	for _, r := range rules {
		for _, e := range r.Exprs {
			if imm, ok := e.(*expr.Immediate); ok && bytes.Equal(imm.Data, want) {
				return true, nil
			}
		}
	}
	return false, nil
}

// waitFor polls until chain has a rule for ip.
func waitFor(t testing.TB, k *kernel, chain string, ip netip.Addr) {
	deadline := time.Now().Add(pollTimeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := k.has(chain, ip)
		if ok {
			return
		}
		last = err
		time.Sleep(pollInterval)
	}
	t.Fatalf("%s has no rule for %s after %v (last error: %v)", chain, ip, pollTimeout, last)
}
