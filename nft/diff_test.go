package nft_test

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// converge applies Diff(committed, desired) to f and checks that f then
// holds exactly desired.
func converge(t *testing.T, f *nft.Fake, committed, desired nft.Ruleset) *nft.Plan {
	t.Helper()
	p := nft.Diff(committed, desired)
	if err := f.Apply(p); err != nil {
		t.Fatalf("apply: %v\nplan:\n%s", err, p.Text())
	}
	if diff := cmp.Diff(desired.CanonicalText(), f.Ruleset.CanonicalText()); diff != "" {
		t.Fatalf("after apply (-want +got):\n%s", diff)
	}
	return p
}

func TestDiffOneEndpointChange(t *testing.T) {
	snap := synth.Plain(50, 10)
	f := nft.NewFake()
	before := rulesetOf(snap)
	converge(t, f, nil, before)

	snap.Slices[7].Endpoints[3].Addresses[0] = netip.MustParseAddr("10.250.0.1")
	p := converge(t, f, before, rulesetOf(snap))
	// The Service's endpoint lists (ClusterIP and NodePort) and its hairpin
	// element: one deletion and one addition each, and no rule.
	if p.Full || len(p.Ops) != 6 {
		t.Fatalf("plan: full=%v, %d ops, want a 6-op patch:\n%s", p.Full, len(p.Ops), p.Text())
	}
	for _, op := range p.Ops {
		if op.Kind != nft.AddElements && op.Kind != nft.DeleteElements {
			t.Errorf("op other than elements: %s", op)
		}
	}
}

func TestDiffNoChange(t *testing.T) {
	rs := rulesetOf(synth.Plain(20, 3))
	if p := nft.Diff(rs, rulesetOf(synth.Plain(20, 3))); !p.Empty() {
		t.Fatalf("identical rulesets gave a plan:\n%s", p.Text())
	}
}

func TestDiffFullFromUnknown(t *testing.T) {
	rs := rulesetOf(synth.Plain(3, 2))
	p := nft.Diff(nil, rs)
	if !p.Full {
		t.Fatal("a plan from unknown state must be full")
	}
	// A stale table the kernel holds but we don't want is deleted as well:
	// the IPv6 table has no content here.
	f := nft.NewFake()
	f.Ruleset[nft.IPv6] = &nft.Table{Family: nft.IPv6, Name: nft.TableName}
	converge(t, f, nil, rs)
	if f.Ruleset[nft.IPv6] == nil {
		return // the node has an IPv6 address, so the table is wanted
	}
}

func TestDiffServiceLifecycle(t *testing.T) {
	f := nft.NewFake()
	var committed nft.Ruleset
	steps := []*model.Snapshot{synth.Plain(5, 3), synth.Plain(8, 3), synth.Plain(2, 3), synth.Plain(2, 0), synth.Plain(4, 40), {}}
	for i, s := range steps {
		desired := rulesetOf(s)
		p := converge(t, f, committed, desired)
		if i > 0 && p.Full {
			t.Errorf("step %d: plan replaced the tables; want a patch", i)
		}
		committed = desired
	}
}

func TestDiffStructureChangeReplaces(t *testing.T) {
	rs := rulesetOf(synth.Plain(3, 2))
	changed := rs.Clone()
	changed[nft.IPv4].Sets[0].Comment = "old comment"
	f := nft.NewFake()
	converge(t, f, nil, changed)
	if p := converge(t, f, changed, rs); !p.Full && p.Ops[0].Kind != nft.AddTable {
		t.Fatalf("a changed set definition must replace the table:\n%s", p.Text())
	}
}

// TestDiffRandomSequence applies a random sequence of cluster changes and
// checks that every patch is accepted by the atomic fake and converges.
func TestDiffRandomSequence(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f := nft.NewFake()
	snap := synth.Plain(30, 4)
	committed := rulesetOf(snap)
	converge(t, f, nil, committed)
	for step := range 200 {
		mutate(r, snap)
		desired := rulesetOf(snap)
		converge(t, f, committed, desired)
		committed = desired
		_ = step
	}
}

func mutate(r *rand.Rand, s *model.Snapshot) {
	i := r.IntN(len(s.Slices))
	sl := &s.Slices[i]
	switch r.IntN(4) {
	case 0:
		sl.Endpoints = append(sl.Endpoints, model.Endpoint{Ready: true, Addresses: []netip.Addr{synth.MovedEndpoint(i*100 + r.IntN(100))}})
	case 1:
		if len(sl.Endpoints) > 0 {
			sl.Endpoints = sl.Endpoints[:len(sl.Endpoints)-1]
		}
	case 2:
		if len(sl.Endpoints) > 0 {
			sl.Endpoints[0].Ready = !sl.Endpoints[0].Ready
		}
	default:
		svc := &s.Services[i]
		svc.Ports[0].NodePort = uint16(31000 + r.IntN(500))
	}
}
