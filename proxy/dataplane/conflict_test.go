package dataplane

import (
	"errors"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// racingKernel commits somebody else's change to the fake kernel just
// before each of the next `races` plans reaches it: after the Dataplane
// read the generation and planned, before its commit.
type racingKernel struct {
	*nft.Fake
	races   int
	foreign func(nft.Ruleset)
	refused []error // what Apply returned for the plans that raced
}

func (k *racingKernel) Apply(p *nft.Plan) error {
	if k.races == 0 || p.Empty() {
		return k.Fake.Apply(p)
	}
	k.races--
	k.foreign(k.Ruleset)
	k.Gen = nft.NextGeneration(k.Gen) // the foreign commit
	err := k.Fake.Apply(p)
	k.refused = append(k.refused, err)
	return err
}

// TestSyncReplansAfterForeignCommit: a commit by somebody else between
// planning and applying is refused by the generation the plan carries,
// never applied on top of the other commit; the Dataplane reads the tables
// back and commits a plan from them, which both repairs what the other
// commit did to our table and makes our own change.
func TestSyncReplansAfterForeignCommit(t *testing.T) {
	tests := []struct {
		name         string
		foreign      func(nft.Ruleset)
		first        bool // the race is on the first Sync, which replaces our tables whole
		wantRepaired bool
	}{
		{"our map element deleted", tamperings[2].fn, false, true},
		{"a foreign rule in our chain", tamperings[3].fn, false, true},
		{"another table changed", func(nft.Ruleset) {}, false, false},
		{"first sync over kube-proxy's table, a chain added to it", tamperings[4].fn, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &racingKernel{Fake: nft.NewFake(), foreign: tc.foreign}
			k.Ruleset[nft.IPv4] = kubeProxyTable()
			d := New(k)
			snap := synth.Plain(5, 3)
			in := input(snap)
			if !tc.first {
				mustSync(t, d, k.Fake, in)
				snap.Slices[1].Endpoints = snap.Slices[1].Endpoints[1:]
				in = input(snap, "ns/svc-1")
			}
			k.races = 1
			res := mustSync(t, d, k.Fake, in) // the kernel holds exactly the fresh compile
			t.Logf("refused: %v", k.refused)
			t.Logf("result: full=%v ops=%d repaired=%v replanned=%d", res.Full, res.Ops, res.Repaired, res.Replanned)
			if len(k.refused) != 1 || !nft.IsConflict(k.refused[0]) {
				t.Fatalf("the racing plan got %v, want a conflict", k.refused)
			}
			if res.Replanned != 1 || res.Repaired != tc.wantRepaired || res.Full != tc.first {
				t.Fatalf("result %+v, want a plan made again once, repaired=%v, full=%v", res, tc.wantRepaired, tc.first)
			}
			if res := mustSync(t, d, k.Fake, input(snap)); res.Ops != 0 || res.Repaired {
				t.Fatalf("sync after the race: %+v, want nothing to do", res)
			}
		})
	}
}

// TestSyncGivesUpUnderForeignCommits: when every plan races with another
// commit, Sync fails with the conflict after maxReplans plans made again,
// having applied none of them; the next Sync, without races, converges.
func TestSyncGivesUpUnderForeignCommits(t *testing.T) {
	k := &racingKernel{Fake: nft.NewFake(), foreign: func(nft.Ruleset) {}}
	d := New(k)
	snap := synth.Plain(5, 3)
	mustSync(t, d, k.Fake, input(snap))
	k.races = maxReplans + 1
	snap.Slices[1].Endpoints = nil
	transactions := k.Transactions
	_, err := d.Sync(input(snap, "ns/svc-1"))
	var conflict *nft.ConflictError
	if !errors.As(err, &conflict) || len(k.refused) != maxReplans+1 || k.Transactions != transactions {
		t.Fatalf("sync: %v after %d refused plans and %d commits, want a conflict after %d refused plans and no commit",
			err, len(k.refused), k.Transactions-transactions, maxReplans+1)
	}
	mustSync(t, d, k.Fake, input(snap))
}
