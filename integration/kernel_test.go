//go:build integration

package integration

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestReadBack proves that the netlink reader decodes exactly what the
// applier wrote (a diff against it is empty), and that when someone tampers
// with our table through the nft binary, the diff from what is read back
// notices and repairs it to the very same listing.
func TestReadBack(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	p.sync(t, mixedSnapshot())
	assertInSync(t, p)
	before := nftIn(t, c.Node, "list", "ruleset")
	for _, tc := range []struct {
		tamper string
		full   bool // the repair rebuilds a whole table
	}{
		{tamper: "flush chain ip kube-proxy services"},
		{tamper: "delete element ip kube-proxy cluster-ip-ports { 10.96.1.10 . tcp . 80 }"},
		{tamper: "add element ip6 kube-proxy cluster-ips { fd00:96::9:9 }"},
		{tamper: "add rule ip kube-proxy masquerading counter"},
		{tamper: "add chain ip kube-proxy stray"},
		{tamper: "flush chain ip kube-proxy service-test/sticky-big/tcp/http/b2"},
		{tamper: "flush chain ip kube-proxy pick-endpoint"},
		{tamper: "delete element ip kube-proxy endpoints-40 { 10.96.1.60 . tcp . 80 . 1 }"},
		{tamper: "delete element ip6 kube-proxy nodeport-endpoints-1 { tcp . 31080 . 0 }"},
		{tamper: "flush map ip kube-proxy endpoints-40"},
		{tamper: "flush chain ip kube-proxy pick-endpoint-40"},
		{tamper: "delete element ip kube-proxy service-cidrs { 10.97.0.0/16 }"},
		{tamper: "add element ip6 kube-proxy service-cidrs { fd00:97::/112 }"},
		// A range that is no prefix cannot be deleted as prefixes: the
		// table is replaced. In ip6, like the other full repair: the ip
		// table's hash sets, re-created, would list their many elements in
		// another order than before.
		{tamper: "add element ip6 kube-proxy service-cidrs { fd00:200::-fd00:200::2 }", full: true},
		{tamper: "delete table ip6 kube-proxy", full: true},
	} {
		t.Run(tc.tamper, func(t *testing.T) {
			nftIn(t, c.Node, strings.Fields(tc.tamper)...)
			plan := nft.Diff(mustRead(t, p), p.committed)
			if plan.Empty() || plan.Full != tc.full {
				t.Fatalf("repair plan (full=%v, %d ops), want a non-empty plan with full=%v", plan.Full, len(plan.Ops), tc.full)
			}
			t.Logf("repair plan:\n%s", plan.Text())
			if err := p.k.Apply(plan); err != nil {
				t.Fatalf("apply repair: %v", err)
			}
			if diff := diffLines(before, nftIn(t, c.Node, "list", "ruleset")); diff != "" {
				t.Errorf("ruleset after repair (-before +after):\n%s", diff)
			}
			assertInSync(t, p)
		})
	}
}

func mustRead(t *testing.T, p *proxy) nft.Ruleset {
	t.Helper()
	rs, err := p.k.Read()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// assertInSync reads the tables back and wants no difference from what
// was committed.
func assertInSync(t *testing.T, p *proxy) {
	t.Helper()
	if plan := nft.Diff(mustRead(t, p), p.committed); !plan.Empty() {
		t.Errorf("read back differs from what was committed; plan:\n%s", plan.Text())
	}
}

// TestAtomicFailure proves that a transaction the kernel rejects in its
// middle changes nothing (the listing is byte for byte the same), that the
// connection still commits the next good plan, and that Locate names the
// operation the kernel rejected.
func TestAtomicFailure(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	p.sync(t, mixedSnapshot())
	before := nftIn(t, c.Node, "list", "ruleset")
	next := mixedSnapshot()
	extra := []port{{name: "http", proto: "TCP", port: 80, target: 8080}}
	next.Services = append(next.Services, service("extra", addrs("10.96.1.70"), extra...))
	next.Slices = append(next.Slices, endpointSlices("extra", extra, addrs("10.244.1.7")...)...)
	next.Slices[0].Endpoints = next.Slices[0].Endpoints[:1] // web-ipv4 loses an endpoint
	desired := p.compile(t, next)
	valid := nft.Diff(p.committed, desired)
	if valid.Full || len(valid.Ops) < 4 {
		t.Fatalf("want a partial plan of a few ops to break, got full=%v:\n%s", valid.Full, valid.Text())
	}
	for _, tc := range badOps(p.committed) {
		t.Run(tc.name, func(t *testing.T) {
			at := len(valid.Ops) / 2
			plan := &nft.Plan{Ops: slices.Concat(valid.Ops[:at], []nft.Op{tc.op}, valid.Ops[at:])}
			err := p.k.Apply(plan)
			var opErr *nft.OpError
			if !errors.As(err, &opErr) {
				t.Fatalf("apply: err = %v, want an *nft.OpError", err)
			}
			t.Logf("apply: %v", err)
			if diff := diffLines(before, nftIn(t, c.Node, "list", "ruleset")); diff != "" {
				t.Errorf("a failed transaction changed the ruleset (-before +after):\n%s", diff)
			}
			if i, err := p.k.Locate(plan); err != nil || i != at {
				t.Errorf("Locate = %d, %v; want %d (%s)", i, err, at, tc.op)
			}
		})
	}
	t.Run("the good plan still commits", func(t *testing.T) {
		if err := p.k.Apply(valid); err != nil {
			t.Fatal(err)
		}
		p.committed = desired
		assertInSync(t, p)
	})
}

// badOps are operations the kernel refuses, each for its own reason.
func badOps(committed nft.Ruleset) []struct {
	name string
	op   nft.Op
} {
	accept := &nft.Rule{Stmts: []nft.Stmt{nft.Verdict{Kind: nft.Accept}}}
	serviceIPs := committed[nft.IPv4].Set("service-ips")
	dangling := nft.Element{
		Key:     []nft.Value{{Addr: netip.MustParseAddr("10.96.9.9")}, {Num: uint32(nft.ProtoTCP)}, {Num: 80}},
		Verdict: nft.GotoChain("no-such-chain"),
	}
	return []struct {
		name string
		op   nft.Op
	}{
		{"rule in a missing chain", nft.Op{Kind: nft.AddRule, Family: nft.IPv4, Name: "no-such-chain", Rule: accept}},
		{"delete a referenced chain", nft.Op{Kind: nft.DeleteChain, Family: nft.IPv6, Name: "mark-for-masquerade"}},
		{"element pointing at a missing chain", nft.Op{Kind: nft.AddElements, Family: nft.IPv4, Name: "service-ips",
			Set: serviceIPs, Elements: []nft.Element{dangling}}},
	}
}

// TestKernelFailsLikeTheFake: each operation the kernel refuses fails with
// the errno the Fake uses for it, so that nft.IsNotFound, IsExists and
// IsBusy tell the same story about both.
func TestKernelFailsLikeTheFake(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	p.sync(t, mixedSnapshot())
	serviceIPs := p.committed[nft.IPv4].Set("service-ips")
	clash := serviceIPs.Elements[0]
	clash.Verdict = nft.Verdict{Kind: nft.Drop}
	missing := nft.Element{Key: []nft.Value{{Addr: netip.MustParseAddr("10.96.9.9")}, {Num: uint32(nft.ProtoTCP)}, {Num: 80}},
		Verdict: nft.Verdict{Kind: nft.Drop}}
	tests := []struct {
		name string
		op   nft.Op
		is   func(error) bool
	}{
		{"rule in a missing chain", nft.Op{Kind: nft.AddRule, Family: nft.IPv4, Name: "no-such-chain",
			Rule: &nft.Rule{Stmts: []nft.Stmt{nft.Verdict{Kind: nft.Accept}}}}, nft.IsNotFound},
		{"delete a missing chain", nft.Op{Kind: nft.DeleteChain, Family: nft.IPv4, Name: "no-such-chain"}, nft.IsNotFound},
		{"delete a chain in use", nft.Op{Kind: nft.DeleteChain, Family: nft.IPv4, Name: "mark-for-masquerade"}, nft.IsBusy},
		{"delete a set in use", nft.Op{Kind: nft.DeleteSet, Family: nft.IPv4, Name: "cluster-ips"}, nft.IsBusy},
		{"delete a missing element", nft.Op{Kind: nft.DeleteElements, Family: nft.IPv4, Name: "service-ips",
			Set: serviceIPs, Elements: []nft.Element{missing}}, nft.IsNotFound},
		{"add an element there with another verdict", nft.Op{Kind: nft.AddElements, Family: nft.IPv4, Name: "service-ips",
			Set: serviceIPs, Elements: []nft.Element{clash}}, nft.IsExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := &nft.Plan{Ops: []nft.Op{tc.op}}
			kerr := p.k.Apply(plan)
			f := nft.NewFake()
			f.Ruleset = p.committed.Clone()
			ferr := f.Apply(plan)
			t.Logf("kernel: %v; fake: %v", kerr, ferr)
			if !tc.is(kerr) || !tc.is(ferr) {
				t.Errorf("kernel: %v; fake: %v; want both to satisfy the predicate", kerr, ferr)
			}
		})
	}
	assertInSync(t, p)
}

// TestReadBackWhileResizing reads the tables back right after the commit
// that filled them: the kernel is still growing its hash sets' tables then,
// which reorders what a dump walks between its parts, and a read that took
// the parts as they came would miss elements and repeat others.
func TestReadBackWhileResizing(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	p.opts.LocalCIDRs = nil
	for range 3 {
		p.sync(t, *synth.Plain(5000, 10))
		assertInSync(t, p)
		p.sync(t, model.Snapshot{})
	}
}
