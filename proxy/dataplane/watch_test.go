package dataplane

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// subscribe follows f's announcements until the test ends or cancel.
func subscribe(t *testing.T, f *nft.Fake) (<-chan nft.Commit, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := f.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ch, cancel
}

// watching returns a Dataplane that has synced snap into a counting fake
// and watches it.
func watching(t *testing.T, snap Input) (*Dataplane, *countingKernel, <-chan Repair) {
	t.Helper()
	k := &countingKernel{Fake: nft.NewFake()}
	d := New(k)
	mustSync(t, d, k.Fake, snap)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return d, k, d.Watch(ctx)
}

func nextRepair(t *testing.T, ch <-chan Repair) Repair {
	t.Helper()
	select {
	case rep := <-ch:
		return rep
	case <-time.After(10 * time.Second):
		t.Fatal("no repair within 10s of the change")
		return Repair{}
	}
}

// TestWatchRepairsWhatWasAnnounced: each change somebody else commits to
// our table is repaired by Watch alone, from what the announcement says:
// no read-back, and for a patch exactly the operations it needs.
func TestWatchRepairsWhatWasAnnounced(t *testing.T) {
	for _, tc := range foreignPlans {
		t.Run(tc.name, func(t *testing.T) {
			in := input(synth.Plain(5, 3))
			d, k, repairs := watching(t, in)
			want := k.Ruleset.CanonicalText()
			if err := k.Foreign(tc.plan(k.Ruleset)); err != nil {
				t.Fatalf("tampering: %v", err)
			}
			rep := nextRepair(t, repairs)
			if rep.Err != nil || rep.ReadBack || rep.Ops == 0 || (tc.ops > 0 && rep.Ops != tc.ops) {
				t.Fatalf("repair %+v, want %d ops without a read-back", rep, tc.ops)
			}
			if diff := cmp.Diff(want, k.Ruleset.CanonicalText()); diff != "" {
				t.Fatalf("after the repair (-before +after):\n%s", diff)
			}
			if k.reads != 0 {
				t.Fatalf("%d read-backs, want none", k.reads)
			}
			if res := mustSync(t, d, k.Fake, input(in.Snapshot, []string{}...)); res.Ops != 0 || res.Repaired || res.ReadBack {
				t.Fatalf("sync after the repair: %+v, want nothing to do", res)
			}
		})
	}
}

// TestWatchIgnoresOtherTables: a transaction on another table (a CNI's)
// is noticed and costs nothing: no repair, no read-back, no transaction,
// and the syncs that follow plan from the mirror.
func TestWatchIgnoresOtherTables(t *testing.T) {
	in := input(synth.Plain(5, 3))
	d, k, repairs := watching(t, in)
	transactions := k.Transactions
	for range 3 {
		if err := k.Foreign(&nft.Plan{}); err != nil {
			t.Fatal(err)
		}
	}
	res := mustSync(t, d, k.Fake, input(in.Snapshot, []string{}...))
	if res.Ops != 0 || res.Repaired || res.ReadBack || k.reads != 0 || k.Transactions != transactions {
		t.Fatalf("sync after 3 foreign transactions: %+v, %d reads, %d transactions; want nothing", res,
			k.reads, k.Transactions-transactions)
	}
	if err := k.Foreign(foreignPlans[0].plan(k.Ruleset)); err != nil {
		t.Fatal(err)
	}
	if rep := nextRepair(t, repairs); rep.Ops != 1 || rep.ReadBack {
		t.Fatalf("first repair %+v, want the element's", rep)
	}
}

// TestWatchReadsBackAfterLoss: when announcements were lost, Watch reads
// the tables back and repairs whatever differs.
func TestWatchReadsBackAfterLoss(t *testing.T) {
	in := input(synth.Plain(5, 3))
	_, k, repairs := watching(t, in)
	want := k.Ruleset.CanonicalText()
	k.Unannounced(tamperings[1].fn)
	k.Lose()
	wantReadBack(t, k, nextRepair(t, repairs), want)
}

// wantReadBack checks that rep is the first read-back of k, that it
// repaired something, and that k's tables are again want.
func wantReadBack(t *testing.T, k *countingKernel, rep Repair, want string) {
	t.Helper()
	if rep.Err != nil || !rep.ReadBack || rep.Ops == 0 || k.reads != 1 {
		t.Fatalf("repair %+v after %d reads, want one read-back that repairs", rep, k.reads)
	}
	if diff := cmp.Diff(want, k.Ruleset.CanonicalText()); diff != "" {
		t.Fatalf("after the repair (-before +after):\n%s", diff)
	}
}

// TestWatchReadsBackWhatCameBefore: a change made before Watch began to
// follow the announcements was never announced; Watch finds the
// generation moved and reads the tables back.
func TestWatchReadsBackWhatCameBefore(t *testing.T) {
	k := &countingKernel{Fake: nft.NewFake()}
	d := New(k)
	mustSync(t, d, k.Fake, input(synth.Plain(5, 3)))
	want := k.Ruleset.CanonicalText()
	k.Unannounced(tamperings[2].fn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wantReadBack(t, k, nextRepair(t, d.Watch(ctx)), want)
}

// TestSyncCatchesUpWithAnnouncements: a Sync that finds the generation
// moved takes the announcements it has not seen (waiting for those in
// flight), repairs what they changed in a transaction of its own, and
// plans its own change from the mirror: no read-back.
func TestSyncCatchesUpWithAnnouncements(t *testing.T) {
	k := &countingKernel{Fake: nft.NewFake()}
	d := New(k)
	snap := synth.Plain(5, 3)
	mustSync(t, d, k.Fake, input(snap))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.inbox = d.subscribe(ctx) // announcements, without Watch's goroutine
	if err := k.Foreign(foreignPlans[3].plan(k.Ruleset)); err != nil {
		t.Fatal(err)
	}
	snap.Slices[1].Endpoints = snap.Slices[1].Endpoints[1:]
	res := mustSync(t, d, k.Fake, input(snap, "ns/svc-1"))
	if !res.Repaired || res.ReadBack || k.reads != 0 {
		t.Fatalf("sync: %+v after %d reads, want a repair from announcements", res, k.reads)
	}
}

// TestWatchSurvivesARace: somebody commits between the repair's plan and
// its commit; the kernel refuses the plan, the announcement of that commit
// joins the drift, and the plan made again repairs both.
func TestWatchSurvivesARace(t *testing.T) {
	k := &racingForeignKernel{countingKernel: countingKernel{Fake: nft.NewFake()}}
	d := New(k)
	snap := synth.Plain(5, 3)
	mustSync(t, d, k.Fake, input(snap))
	want := k.Ruleset.CanonicalText()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	repairs := d.Watch(ctx)
	k.race = foreignPlans[3].plan(k.Ruleset)
	if err := k.Foreign(foreignPlans[0].plan(k.Ruleset)); err != nil {
		t.Fatal(err)
	}
	rep := nextRepair(t, repairs)
	if rep.Err != nil || rep.ReadBack || k.refused != 1 || k.reads != 0 {
		t.Fatalf("repair %+v, %d refused, %d reads; want one refused plan and a repair without read-back", rep, k.refused, k.reads)
	}
	if diff := cmp.Diff(want, k.Ruleset.CanonicalText()); diff != "" {
		t.Fatalf("after the repair (-before +after):\n%s", diff)
	}
}

// racingForeignKernel commits race, announced, just before the next plan
// reaches it.
type racingForeignKernel struct {
	countingKernel
	race    *nft.Plan
	refused int
}

func (k *racingForeignKernel) Apply(p *nft.Plan) error {
	if k.race == nil {
		return k.Fake.Apply(p)
	}
	if err := k.Foreign(k.race); err != nil {
		return err
	}
	k.race = nil
	err := k.Fake.Apply(p)
	if nft.IsConflict(err) {
		k.refused++
	}
	return err
}

func TestSpacing(t *testing.T) {
	var s spacing
	now := time.Unix(1000, 0)
	var waits []time.Duration
	for range freeRepairs + 3 {
		now = now.Add(s.wait(now))
		waits = append(waits, s.wait(now))
		s.done(now)
		now = now.Add(10 * time.Millisecond) // tampered with again at once
		waits[len(waits)-1] = s.wait(now)
	}
	want := []time.Duration{0, 0, 0, 0, 0, 90 * time.Millisecond, 190 * time.Millisecond, 390 * time.Millisecond}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("waits after each repair (-want +got):\n%s", diff)
	}
	now = now.Add(s.wait(now) + 2*fightGap)
	if s.done(now); s.wait(now.Add(10*time.Millisecond)) != 0 {
		t.Errorf("a repair after a quiet spell waits %v, want 0", s.wait(now))
	}
}
