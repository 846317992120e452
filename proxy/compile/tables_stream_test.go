package compile_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestStreamIsTheFullPlan: a Stream commits exactly what the full plan
// from unknown state commits, with the same operations in the same order
// besides elements, and no operation holding more than a batch of
// elements; emitting it twice gives the same operations (appliers retry).
func TestStreamIsTheFullPlan(t *testing.T) {
	ipv4 := model.Node{Name: synth.NodeName, IPs: []netip.Addr{netip.MustParseAddr("198.51.100.1")}}
	snaps := map[string]*model.Snapshot{
		"plain, lists over a batch": synth.Plain(300, 7),
		"mixed":                     synth.Cluster(synth.Spec{Services: 400, Endpoints: 5, Mixed: true}),
		"mixed, Maglev":             synth.Cluster(synth.Spec{Services: 100, Endpoints: 5, Mixed: true, MaglevEvery: 10}),
		"empty":                     {},
	}
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 11))
		g := synth.NewRandom(r, 40)
		snaps[fmt.Sprintf("conflicts, seed %d", seed)] = g.Snap
	}
	for name, snap := range snaps {
		for nodeName, node := range map[string]model.Node{"dual-stack": testNode, "IPv4": ipv4} {
			t.Run(name+"/"+nodeName, func(t *testing.T) {
				checkStream(t, compile.New(snap, node, compile.DefaultOptions()))
			})
		}
	}
}

func checkStream(t *testing.T, c *compile.Tables) {
	t.Helper()
	want := nft.Diff(nil, c.Ruleset())
	s := c.Stream()
	got, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if !got.Full {
		t.Error("stream is not Full")
	}
	if diff := cmp.Diff(structure(want), structure(got)); diff != "" {
		t.Errorf("operations besides elements (-full plan +stream):\n%s", diff)
	}
	again, _ := s.Plan()
	if diff := cmp.Diff(got.Text(), again.Text()); diff != "" {
		t.Errorf("second emission differs (-first +second):\n%s", diff)
	}
	for _, op := range got.Ops {
		if len(op.Elements) > 1024 {
			t.Errorf("%s: more elements than a batch", op)
		}
	}
	fromPlan, fromStream := nft.NewFake(), nft.NewFake()
	if err := fromPlan.Apply(want); err != nil {
		t.Fatal(err)
	}
	if err := fromStream.Apply(got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromPlan.Ruleset.Text(), fromStream.Ruleset.Text()); diff != "" {
		t.Errorf("committed (-full plan +stream):\n%s", diff)
	}
}

// structure is a plan's operations as text, element operations left out.
func structure(p *nft.Plan) []string {
	var out []string
	for _, op := range p.Ops {
		if op.Kind != nft.AddElements {
			out = append(out, op.String())
		}
	}
	return out
}
