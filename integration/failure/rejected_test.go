//go:build integration

package failure

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// apiIP is the ClusterIP of the second Service.
var apiIP = netip.MustParseAddr("10.96.7.20")

// requestTimeout bounds one request through the node.
const requestTimeout = 2 * time.Second

// rejecting is a dataplane.Kernel that, while armed, inserts one operation
// the kernel refuses (a rule in a chain that does not exist) in the middle
// of every plan: the operations before it are valid and would show in the
// ruleset if the kernel applied part of a transaction.
type rejecting struct {
	dataplane.Kernel
	armed bool
}

var _ dataplane.Kernel = (*rejecting)(nil)

// badChain is the chain the injected rule names; nothing creates it.
const badChain = "no-such-chain"

func (r *rejecting) Apply(p *nft.Plan) error {
	if !r.armed || p.Empty() {
		return r.Kernel.Apply(p)
	}
	bad := nft.Op{Kind: nft.AddRule, Family: nft.IPv4, Name: badChain, Rule: &nft.Rule{Comment: "injected"}}
	mid := len(p.Ops) / 2
	ops := append(append(append([]nft.Op{}, p.Ops[:mid]...), bad), p.Ops[mid:]...)
	return r.Kernel.Apply(&nft.Plan{Ops: ops, Full: p.Full})
}

// TestRejectedTransactionLeavesRulesetIntact programs a Service, then
// moves its endpoint with a transaction the kernel rejects: the ruleset
// must be byte for byte what it was, traffic must still reach the old
// endpoint, the Sync must return the error, and the next Sync (which
// replaces the tables whole, since the mirror is no longer trusted) must
// program the new endpoint.
func TestRejectedTransactionLeavesRulesetIntact(t *testing.T) {
	c := lab.NewCluster(t, 2)
	for _, b := range c.Backends {
		lab.ServeTCP(t, b.NS, lab.AddrPort(b.IPv4, backendPort), b.Name)
	}
	k := &rejecting{Kernel: openKernel(t, c.Node)}
	dp := dataplane.New(k)
	// The rejected sync moves web's endpoint and adds a second Service, so
	// that its plan has valid operations on both sides of the bad one.
	old, moved := web(c.Backends[0].IPv4), web(c.Backends[1].IPv4)
	api := web(c.Backends[0].IPv4)
	api.Services[0].Name, api.Services[0].ClusterIPs = "api", []netip.Addr{apiIP}
	api.Slices[0].Name, api.Slices[0].Service = "api-1", "api"
	moved.Services = append(moved.Services, api.Services...)
	moved.Slices = append(moved.Slices, api.Slices...)
	in := dataplane.Input{Snapshot: old, Node: node(c), Options: options()}
	if _, err := dp.Sync(in); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	addr := lab.AddrPort(webIP, 80)
	wantAnswer(t, c, addr, c.Backends[0].Name)
	before := ruleset(t, c.Node)

	k.armed = true
	in.Snapshot, in.Changed = moved, map[string]bool{namespace + "/web": true, namespace + "/api": true}
	res, err := dp.Sync(in)
	var opErr *nft.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("sync with a rejected operation: error %v (result %+v), want an *nft.OpError", err, res)
	}
	t.Logf("rejected as expected (%d ops planned): %v", res.Ops, err)
	if after := ruleset(t, c.Node); after != before {
		t.Fatalf("the ruleset changed although the transaction was rejected:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	wantAnswer(t, c, addr, c.Backends[0].Name)

	k.armed = false
	res, err = dp.Sync(in)
	if err != nil {
		t.Fatalf("recovery sync: %v", err)
	}
	if !res.Full {
		t.Errorf("recovery sync was partial (%d ops): after a failure the mirror must not be trusted", res.Ops)
	}
	wantAnswer(t, c, addr, c.Backends[1].Name)
	wantAnswer(t, c, lab.AddrPort(apiIP, 80), c.Backends[0].Name)
	wantMatches(t, k, moved, c)
}

// wantAnswer fails unless a request to addr is answered by backend name.
// The Service has one endpoint, so one request decides.
func wantAnswer(t *testing.T, c *lab.Cluster, addr, name string) {
	t.Helper()
	got, err := answeredBy(c, addr)
	if err != nil || got != name {
		t.Fatalf("request to %s: answered by %q, %v; want %q", addr, got, err, name)
	}
}

// wantMatches fails unless the kernel holds exactly the tables snap
// compiles to for the lab's node.
func wantMatches(t *testing.T, k nft.Reader, snap *model.Snapshot, c *lab.Cluster) {
	t.Helper()
	read, err := k.Read()
	if err != nil {
		t.Fatalf("read the kernel's tables: %v", err)
	}
	want := compile.New(snap, node(c), options()).Ruleset()
	if plan := nft.Diff(read, want); !plan.Empty() {
		t.Errorf("the kernel differs from the snapshot; the plan to fix it:\n%s", plan.Text())
	}
}
