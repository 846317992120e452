package dataplane

import (
	"errors"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestSyncRandomHistory drives a Dataplane through a random history of
// Service changes, failed transactions, external changes and resyncs, and
// checks after every successful Sync that the kernel holds exactly what a
// fresh compile of the snapshot gives.
func TestSyncRandomHistory(t *testing.T) {
	synth.Histories(t, 5, 20, func(t *testing.T, g *synth.Random) {
		f := nft.NewFake()
		d := New(f)
		pending := map[string]bool{}
		for step := range 120 {
			in := input(g.Snap)
			in.Changed = pending
			switch g.IntN(10) {
			case 0: // the next transaction fails
				f.FailAt, f.FailErr = 0, errors.New("injected")
			case 1: // somebody else changes our table
				tamperings[g.IntN(len(tamperings))].fn(f.Ruleset)
				f.Gen++
			case 2:
				in.Full = true
			}
			res, err := d.Sync(in)
			failing := f.FailErr != nil
			f.FailAt, f.FailErr = -1, nil
			switch {
			case err != nil && !failing:
				t.Fatalf("step %d: sync: %v", step, err)
			case err == nil && failing && res.Ops > 0:
				t.Fatalf("step %d: sync of %d ops succeeded through a failing applier", step, res.Ops)
			case err == nil:
				mustMatch(t, f, in, step)
				pending = map[string]bool{}
			}
			for key := range g.Mutate() {
				pending[key] = true
			}
		}
	})
}

func mustMatch(t *testing.T, f *nft.Fake, in Input, step int) {
	t.Helper()
	want, _ := compile.Ruleset(in.Snapshot, in.Node, in.Options)
	if want.CanonicalText() != f.Ruleset.CanonicalText() {
		t.Fatalf("step %d: the kernel differs from a fresh compile", step)
	}
}
