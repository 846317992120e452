package compile_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestCompiledStale makes random changes without telling the Tables
// which Services changed, as a missed event would, and checks that Stale
// finds them: only Services the change touched, and enough of them that
// Update leaves the Tables and the fake kernel exactly as a fresh
// Compile would; after which nothing is stale.
func TestCompiledStale(t *testing.T) {
	synth.Histories(t, 4, 25, func(t *testing.T, g *synth.Random) {
		o := compile.DefaultOptions()
		c := compile.New(g.Snap, testNode, o)
		f := nft.NewFake()
		if err := f.Apply(nft.Diff(nil, c.Ruleset())); err != nil {
			t.Fatal(err)
		}
		for step := range 60 {
			changed := g.Mutate()
			for range g.IntN(3) { // several changes missed at once
				for k := range g.Mutate() {
					changed[k] = true
				}
			}
			stale := c.Stale(g.Snap)
			for k := range stale {
				if !changed[k] {
					t.Fatalf("step %d: %s is stale but did not change (changed: %v)", step, k, changed)
				}
			}
			if err := f.Apply(c.Update(g.Snap, stale)); err != nil {
				t.Fatalf("step %d: apply: %v", step, err)
			}
			want, wantProblems := compile.Ruleset(g.Snap, testNode, o)
			if diff := cmp.Diff(want.CanonicalText(), f.Ruleset.CanonicalText()); diff != "" {
				t.Fatalf("step %d (stale %v of %v): kernel (-want +got):\n%s", step, stale, changed, diff)
			}
			if diff := cmp.Diff(want.Text(), c.Ruleset().Text()); diff != "" {
				t.Fatalf("step %d: Tables tables (-fresh +updated):\n%s", step, diff)
			}
			if diff := cmp.Diff(wantProblems, c.Problems()); diff != "" {
				t.Fatalf("step %d: problems (-fresh +updated):\n%s", step, diff)
			}
			if again := c.Stale(g.Snap); len(again) > 0 {
				t.Fatalf("step %d: still stale after Update: %v", step, again)
			}
		}
	})
}
