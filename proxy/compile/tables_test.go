package compile_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestCompiledUpdateConverges applies random sequences of changes through
// Tables.Update and checks after every step that (1) the partial plan is
// accepted by the atomic fake and leaves it holding exactly what a fresh
// Compile gives, and (2) the Tables's own tables and problems are
// byte-identical to the fresh Compile's.
func TestCompiledUpdateConverges(t *testing.T) {
	nodes := map[string]model.Node{
		"dual-stack node": testNode,
		"IPv4 node":       {Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("198.51.100.1")}},
	}
	for name, node := range nodes {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("%s/seed %d", name, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				g := synth.NewRandom(r, 25)
				checkUpdates(t, g, node, 150)
			})
		}
	}
}

func checkUpdates(t *testing.T, g *synth.Random, node model.Node, steps int) {
	t.Helper()
	o := compile.DefaultOptions()
	c := compile.New(g.Snap, node, o)
	f := nft.NewFake()
	if err := f.Apply(nft.Diff(nil, c.Ruleset())); err != nil {
		t.Fatal(err)
	}
	for step := range steps {
		changed := g.Mutate()
		p := c.Update(g.Snap, changed)
		if err := f.Apply(p); err != nil {
			t.Fatalf("step %d (%v): apply: %v\nplan:\n%s", step, changed, err, p.Text())
		}
		want, wantProblems := compile.Ruleset(g.Snap, node, o)
		if diff := cmp.Diff(want.CanonicalText(), f.Ruleset.CanonicalText()); diff != "" {
			t.Fatalf("step %d (%v): kernel after the partial plan (-want +got):\n%s\nplan:\n%s", step, changed, diff, p.Text())
		}
		if diff := cmp.Diff(want.Text(), c.Ruleset().Text()); diff != "" {
			t.Fatalf("step %d: Tables tables (-fresh +incremental):\n%s", step, diff)
		}
		if diff := cmp.Diff(wantProblems, c.Problems()); diff != "" {
			t.Fatalf("step %d: problems (-fresh +incremental):\n%s", step, diff)
		}
		if diff := cmp.Diff(compile.New(g.Snap, node, o).Status(), c.Status()); diff != "" {
			t.Fatalf("step %d: status (-fresh +incremental):\n%s", step, diff)
		}
	}
}

// TestCompiledUpdateOneEndpoint: a change of one Service's endpoints, an
// address or their number, is map elements only: no rule, no chain, so
// the kernel does not re-validate the table (lists.go).
func TestCompiledUpdateOneEndpoint(t *testing.T) {
	snap := synth.Plain(200, 10)
	snap.Slices[8].Endpoints = snap.Slices[8].Endpoints[1:] // a list of 9: its rung is in use
	c := compile.New(snap, testNode, compile.DefaultOptions())
	eps := &snap.Slices[7].Endpoints
	for _, change := range []struct {
		name string
		do   func()
	}{
		{"address replaced", func() { (*eps)[3].Addresses[0] = netip.MustParseAddr("10.250.0.1") }},
		{"endpoint removed (10 to 9)", func() { *eps = (*eps)[1:] }},
		{"endpoint added (9 to 10)", func() {
			*eps = append(*eps, model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("10.250.0.2")}, Ready: true, Serving: true})
		}},
	} {
		change.do()
		p := c.Update(snap, map[string]bool{"ns/svc-7": true})
		s := p.Stats()
		if p.Full || s.RulesAdded+s.ChainsAdded+s.ChainsFlushed+s.ChainsRemoved > 0 || s.ElementsAdded == 0 {
			t.Errorf("%s: plan: full=%v, %s; want element changes only:\n%s", change.name, p.Full, s, p.Text())
		}
		if p := c.Update(snap, map[string]bool{"ns/svc-7": true}); !p.Empty() {
			t.Fatalf("%s: update without a change:\n%s", change.name, p.Text())
		}
	}
}

// TestCompiledUpdateNewLength: a list length no entry had before adds a
// map and a chain with one rung, and a jump to it in the pick chains
// (rewritten whole, ascending); no other rung is added again. The last
// list of a length takes them away.
func TestCompiledUpdateNewLength(t *testing.T) {
	snap := synth.Plain(20, 3)
	c := compile.New(snap, testNode, compile.DefaultOptions())
	snap.Slices[2].Endpoints = snap.Slices[2].Endpoints[1:]
	p := c.Update(snap, map[string]bool{"ns/svc-2": true})
	// What a plan does to the pick chains and endpoint maps: the rules it
	// adds there and the sets it adds or deletes.
	picks := func(p *nft.Plan) []string {
		var out []string
		for _, op := range p.Ops {
			switch {
			case op.Kind == nft.AddRule && strings.HasPrefix(op.Name, "pick-"):
				out = append(out, op.Name+": "+op.Rule.Text(nft.IPv4))
			case op.Kind == nft.AddSet:
				out = append(out, "add set "+op.Set.Name)
			case op.Kind == nft.DeleteSet:
				out = append(out, "delete set "+op.Name)
			}
		}
		return out
	}
	want := []string{
		"add set nodeport-endpoints-2",
		"add set endpoints-2",
		"pick-endpoint: jump pick-endpoint-2",
		"pick-endpoint: jump pick-endpoint-3",
		"pick-endpoint-2: dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 2 map @endpoints-2",
		"pick-nodeport-endpoint: jump pick-nodeport-endpoint-2",
		"pick-nodeport-endpoint: jump pick-nodeport-endpoint-3",
		"pick-nodeport-endpoint-2: dnat ip to meta l4proto . th dport . numgen random mod 2 map @nodeport-endpoints-2",
	}
	if diff := cmp.Diff(want, picks(p)); diff != "" {
		t.Errorf("pick chains and maps after a list of 2 appeared (-want +got):\n%s\nplan:\n%s", diff, p.Text())
	}
	snap.Slices[2].Endpoints = synth.Plain(20, 3).Slices[2].Endpoints
	p = c.Update(snap, map[string]bool{"ns/svc-2": true})
	want = []string{
		"delete set endpoints-2",
		"delete set nodeport-endpoints-2",
		"pick-endpoint: jump pick-endpoint-3",
		"pick-nodeport-endpoint: jump pick-nodeport-endpoint-3",
	}
	if diff := cmp.Diff(want, picks(p)); diff != "" {
		t.Errorf("pick chains and maps after it went (-want +got):\n%s\nplan:\n%s", diff, p.Text())
	}
}
