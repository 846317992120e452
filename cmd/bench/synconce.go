package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"runtime"
	"syscall"
	"time"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// cost is one timed step: wall time, and the process's CPU time split into
// user (our code) and system (mostly the kernel processing the netlink
// transaction, which runs in the sending thread's context).
type cost struct {
	Wall, User, Sys time.Duration
	Ops             int `json:",omitempty"`
	Bytes           int `json:",omitempty"`
}

// runResult is what one child process measured for one cluster size.
type runResult struct {
	Size        string
	Ports       int // Service ports in the cluster
	Compile     cost
	FullSync    cost
	OneEndpoint cost
	OnePercent  cost
	// ReadBack is reading the whole tables back (what a repair does after
	// lost notifications); ReadCounters reading both tables' counter
	// objects, what a /metrics scrape does.
	ReadBack, ReadCounters cost
	Chains, Rules, Sets    int
	Elements               int
	Problems               int
}

// benchNodeIP is the node's address in the sync benchmark's namespace; no
// packet is sent there.
var benchNodeIP = netip.MustParseAddr("10.0.1.1")

// benchOptions compiles with a cluster CIDR, as most clusters configure,
// so ClusterIP traffic from outside it is masqueraded (kube-proxy's shape
// carries the same rule).
func benchOptions() compile.Options { return benchOptionsFor(size{}) }

// benchOptionsFor is benchOptions with the Maglev table size of s, when it
// sets one.
func benchOptionsFor(s size) compile.Options {
	o := compile.DefaultOptions()
	if s.maglevM > 0 {
		o.Maglev.TableSize = uint32(s.maglevM)
	}
	o.LocalCIDRs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	return o
}

// syncOnce measures one cluster size in a fresh namespace and writes the
// result as JSON. It runs in a child process so that the parent can read
// the child's peak resident memory alone.
func syncOnce(s size, prof profiles, out io.Writer) error {
	snap := generate(s)
	res := runResult{Size: s.String(), Ports: countPorts(snap)}
	node := benchNodeModel(benchNodeIP)
	res.Compile = measure(func() (int, int, error) {
		_, problems := compile.Ruleset(snap, node, benchOptionsFor(s))
		res.Problems = len(problems)
		return 0, 0, nil
	})
	runtime.GC()
	ns, err := newNetns("sync")
	if err != nil {
		return err
	}
	err = syncInNetns(ns, snap, node, benchOptionsFor(s), prof, &res)
	if rerr := ns.remove(); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(res)
}

func syncInNetns(ns *netns, snap *model.Snapshot, node model.Node, opts compile.Options, prof profiles, res *runResult) error {
	k, err := ns.kernel()
	if err != nil {
		return err
	}
	defer k.Close()
	dp := dataplane.New(k)
	syncFn := func(cur *model.Snapshot, changed map[string]bool) func() (int, int, error) {
		return func() (int, int, error) {
			r, err := dp.Sync(dataplane.Input{Snapshot: cur, Node: node, Options: opts, Changed: changed})
			if r.Ops == 0 {
				return 0, 0, err
			}
			return r.Ops, k.LastBatchBytes(), err
		}
	}
	err = prof.around(func() (err error) {
		res.FullSync, err = measureErr(syncFn(snap, nil))
		return err
	})
	if err != nil {
		return fmt.Errorf("first full sync: %w", err)
	}
	res.ReadBack, err = measureErr(func() (int, int, error) { return 0, 0, countObjects(k, res) })
	if err != nil {
		return err
	}
	res.ReadCounters, err = measureErr(func() (int, int, error) { return 0, 0, readCounters(k) })
	if err != nil {
		return err
	}
	n := len(snap.Services)
	one, changed := changeEndpoints(snap, []int{changedService(snap)}, 1)
	if res.OneEndpoint, err = measureErr(syncFn(one, changed)); err != nil {
		return fmt.Errorf("one-endpoint sync: %w", err)
	}
	pct, changed := changeEndpoints(one, spread(max(1, n/100), n), 2)
	if res.OnePercent, err = measureErr(syncFn(pct, changed)); err != nil {
		return fmt.Errorf("1%% sync: %w", err)
	}
	return nil
}

// countObjects reads the table back from the kernel: the counts are what
// the kernel holds, and the read proves the sync landed.
func countObjects(k *kernel.Kernel, res *runResult) error {
	rs, err := k.Read()
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	for _, t := range rs {
		res.Chains += len(t.Chains)
		res.Sets += len(t.Sets)
		for _, c := range t.Chains {
			res.Rules += len(c.Rules)
		}
		for _, s := range t.Sets {
			res.Elements += len(s.Elements)
		}
	}
	return nil
}

func countPorts(snap *model.Snapshot) int {
	n := 0
	for i := range snap.Services {
		n += len(snap.Services[i].Ports)
	}
	return n
}

func measure(fn func() (int, int, error)) cost {
	c, _ := measureErr(fn)
	return c
}

// measureErr times fn: wall clock and this process's user and system CPU.
func measureErr(fn func() (ops, bytes int, err error)) (cost, error) {
	u0, s0 := cpuTimes()
	start := time.Now()
	ops, bytes, err := fn()
	wall := time.Since(start)
	u1, s1 := cpuTimes()
	return cost{Wall: wall, User: u1 - u0, Sys: s1 - s0, Ops: ops, Bytes: bytes}, err
}

func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// changedService is the Service whose endpoint the one-endpoint sync
// moves: the middle one, or with Maglev in the mix the first after it that
// uses Maglev, so that the figure is a Maglev table's change.
func changedService(snap *model.Snapshot) int {
	n := len(snap.Services)
	for i := n / 2; i < n; i++ {
		if snap.Services[i].LoadBalancing == "maglev" {
			return i
		}
	}
	return n / 2
}

// readCounters reads the counter objects of both tables, as a scrape of
// /metrics does.
func readCounters(k *kernel.Kernel) error {
	for _, f := range nft.Families {
		if _, err := k.ReadCounters(f); err != nil {
			return err
		}
	}
	return nil
}
