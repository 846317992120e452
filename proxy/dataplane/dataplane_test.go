package dataplane

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

var testNode = model.Node{Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("198.51.100.1")}}

func input(s *model.Snapshot, changed ...string) Input {
	in := Input{Snapshot: s, Node: testNode, Options: compile.DefaultOptions()}
	if changed != nil {
		in.Changed = map[string]bool{}
		for _, c := range changed {
			in.Changed[c] = true
		}
	}
	return in
}

// mustSync syncs and checks that the fake then holds what snap compiles to.
func mustSync(t *testing.T, d *Dataplane, f *nft.Fake, in Input) Result {
	t.Helper()
	res, err := d.Sync(in)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	want, _ := compile.Ruleset(in.Snapshot, in.Node, in.Options)
	if diff := cmp.Diff(want.CanonicalText(), f.Ruleset.CanonicalText()); diff != "" {
		t.Fatalf("kernel after sync (-want +got):\n%s", diff)
	}
	return res
}

func TestFirstSyncReplacesForeignTable(t *testing.T) {
	tests := []struct {
		name  string
		table *nft.Table
	}{
		{"empty kernel", nil},
		{"kube-proxy's layout", kubeProxyTable()},
		{"our own table from a previous run", func() *nft.Table {
			rs, _ := compile.Ruleset(synth.Plain(3, 2), testNode, compile.DefaultOptions())
			return rs[nft.IPv4]
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := nft.NewFake()
			if tc.table != nil {
				f.Ruleset[nft.IPv4] = tc.table
			}
			res := mustSync(t, New(f), f, input(synth.Plain(5, 2)))
			if !res.Full || f.Transactions != 1 {
				t.Fatalf("full=%v transactions=%d, want one full transaction", res.Full, f.Transactions)
			}
		})
	}
}

// kubeProxyTable is a table in upstream kube-proxy's layout: other sets,
// other chains, a rule we do not know.
func kubeProxyTable() *nft.Table {
	return &nft.Table{Family: nft.IPv4, Name: nft.TableName, Comment: "rules for kube-proxy",
		Sets: []*nft.Set{{Name: "cluster-ips", Key: []nft.DataType{nft.TypeIPv4Addr}}},
		Chains: []*nft.Chain{
			{Name: "nat-prerouting", Base: &nft.Base{Type: "nat", Hook: "prerouting", Priority: -100},
				Rules: []nft.Rule{{Stmts: []nft.Stmt{nft.JumpTo("services")}}}},
			{Name: "services", Rules: []nft.Rule{{Stmts: []nft.Stmt{nft.Foreign{Desc: "vmap"}}}}},
		}}
}

func TestSyncPartialAndIdle(t *testing.T) {
	f := nft.NewFake()
	d := New(f)
	snap := synth.Plain(20, 10)
	mustSync(t, d, f, input(snap))

	snap.Slices[7].Endpoints[3].Addresses[0] = netip.MustParseAddr("10.250.0.1")
	res := mustSync(t, d, f, input(snap, "ns/svc-7"))
	if res.Full || res.Repaired || res.Ops != 6 {
		t.Fatalf("one endpoint changed: %+v, want a 6-op patch (element lists and hairpin)", res)
	}
	res = mustSync(t, d, f, input(snap))
	if res.Ops != 0 || f.Transactions != 2 {
		t.Fatalf("nothing changed: %+v after %d transactions, want no transaction", res, f.Transactions)
	}
}

func TestFailureForcesFullSync(t *testing.T) {
	f := nft.NewFake()
	d := New(f)
	snap := synth.Plain(5, 2)
	mustSync(t, d, f, input(snap))
	before := f.Ruleset.CanonicalText()

	f.FailAt, f.FailErr = 0, errors.New("injected")
	snap.Slices[1].Endpoints = nil
	if _, err := d.Sync(input(snap, "ns/svc-1")); err == nil {
		t.Fatal("sync succeeded with a failing applier")
	}
	if diff := cmp.Diff(before, f.Ruleset.CanonicalText()); diff != "" {
		t.Fatalf("a failed sync changed the kernel (-before +after):\n%s", diff)
	}
	f.FailAt, f.FailErr = -1, nil
	if res := mustSync(t, d, f, input(snap)); !res.Full {
		t.Fatalf("sync after a failure: %+v, want a full sync", res)
	}
}

var (
	_ Kernel = (*kernel.Kernel)(nil)
	_ Kernel = (*nft.Fake)(nil)
)

// TestSyncPaths checks which kind of sync each input leads to, after a
// first full sync of the same cluster.
func TestSyncPaths(t *testing.T) {
	otherOpts := compile.DefaultOptions()
	otherOpts.MasqueradeAll = true
	otherNode := testNode
	otherNode.IPs = []netip.Addr{netip.MustParseAddr("198.51.100.2")}
	tests := []struct {
		name    string
		in      func(in Input) Input
		wantOps bool
	}{
		{"nothing changed", func(in Input) Input { return in }, false},
		{"changed unknown (nil)", func(in Input) Input { in.Changed = nil; return in }, false},
		{"periodic resync", func(in Input) Input { in.Full = true; return in }, false},
		{"options changed", func(in Input) Input { in.Options = otherOpts; return in }, true},
		{"node changed", func(in Input) Input { in.Node = otherNode; return in }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := nft.NewFake()
			d := New(f)
			snap := synth.Plain(10, 3)
			mustSync(t, d, f, input(snap))
			res := mustSync(t, d, f, tc.in(input(snap, []string{}...)))
			if res.Full || res.Repaired || (res.Ops > 0) != tc.wantOps {
				t.Fatalf("result %+v, want a patch with ops=%v", res, tc.wantOps)
			}
			// The next sync of the same input has nothing to do.
			if res := mustSync(t, d, f, tc.in(input(snap, []string{}...))); res.Ops != 0 {
				t.Fatalf("second sync: %+v, want nothing", res)
			}
		})
	}
}

func TestSyncReportsConflicts(t *testing.T) {
	f := nft.NewFake()
	d := New(f)
	snap := synth.Plain(3, 2)
	mustSync(t, d, f, input(snap))
	snap.Services[2].ExternalIPs = []netip.Addr{snap.Services[0].ClusterIPs[0]}
	res := mustSync(t, d, f, input(snap, "ns/svc-2"))
	if len(res.Problems) != 1 || res.Problems[0].Object != "Service ns/svc-2" {
		t.Fatalf("problems %v, want one on ns/svc-2", res.Problems)
	}
	snap.Services = snap.Services[1:] // svc-0 goes: svc-2 gets the address
	snap.Slices = snap.Slices[1:]
	if res := mustSync(t, d, f, input(snap, "ns/svc-0")); len(res.Problems) != 0 {
		t.Fatalf("problems %v after the owner left, want none", res.Problems)
	}
}
