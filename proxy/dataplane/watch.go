package dataplane

import (
	"context"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/nft"
)

// Repair is one repair Watch made after somebody else changed our tables.
type Repair struct {
	Ops int // operations committed; 0 when the tables were found intact
	// ReadBack: the announcements were lost, or are not followed, so the
	// tables were read back whole and compared (seconds at 10,000
	// Services) instead of repairing only what was announced.
	ReadBack bool
	Elapsed  time.Duration // from the start of the repair to its commit
	// Err: the repair failed; the Dataplane no longer knows what the
	// kernel holds, and the next Sync replaces our tables whole.
	Err error
}

const (
	// pollInterval is how often Watch reads the ruleset generation when
	// it cannot follow the kernel's announcements.
	pollInterval = 200 * time.Millisecond
	// catchUpWait bounds the wait for the announcement of a transaction
	// the generation already counts: the kernel moves the generation,
	// then announces. A transaction of 100,000 elements is announced in
	// about 0.1 s; an announcement that does not come in time is lost.
	catchUpWait = time.Second
)

// Watch follows the transactions others commit in the namespace, as the
// kernel announces them (nft.Notifier), and repairs what they change in our
// tables as soon as it is announced: only the objects changed, against the
// mirror (see drift), in one transaction planned from the generation the
// announcement brought. A transaction on another table (a CNI's) costs
// nothing more than being noticed. When announcements are lost, the tables
// are read back whole and compared, as when the Kernel announces nothing
// (then Watch polls the generation).
//
// A transaction committed since our last one, before Watch began to
// follow them, went unannounced: Watch then reads the tables back first.
//
// Each repair is reported on the channel, which the caller must drain.
// Watch stops when ctx is done; the channel is never closed. Call it once.
func (d *Dataplane) Watch(ctx context.Context) <-chan Repair {
	out := make(chan Repair)
	in := d.subscribe(ctx)
	d.mu.Lock()
	d.inbox = in
	if gen, err := d.k.Generation(); d.known && (err != nil || gen != d.gen) {
		d.lost = true
	}
	d.mu.Unlock()
	go d.watch(ctx, out)
	return out
}

// subscribe returns an inbox fed by the Kernel's announcements, or nil
// when it announces nothing.
func (d *Dataplane) subscribe(ctx context.Context) *inbox {
	n, ok := d.k.(nft.Notifier)
	if !ok {
		return nil
	}
	ch, err := n.Subscribe(ctx)
	if err != nil {
		klog.Background().WithName("dataplane").Error(err, "Cannot follow ruleset notifications; polling the generation instead",
			"interval", pollInterval)
		return nil
	}
	in := newInbox()
	go in.feed(ch)
	return in
}

func (d *Dataplane) watch(ctx context.Context, out chan<- Repair) {
	var sp spacing
	for {
		rep, done, next := d.tend(&sp)
		if done {
			select {
			case out <- rep:
			case <-ctx.Done():
				return
			}
			continue
		}
		t := time.NewTimer(next.after)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-next.changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// wakeup is what the watcher waits for: a new announcement, or time.
type wakeup struct {
	changed <-chan struct{}
	after   time.Duration
}

// tend takes the announcements queued, or polls the generation without
// them, and repairs what changed unless repairs are being spaced out. It
// returns the repair, if one was made, and otherwise when to look again.
func (d *Dataplane) tend(sp *spacing) (Repair, bool, wakeup) {
	d.mu.Lock()
	defer d.mu.Unlock()
	next := wakeup{after: pollInterval}
	if d.inbox != nil {
		next = wakeup{changed: d.takeAnnouncements(), after: time.Hour}
	}
	if d.inbox == nil && d.known {
		if gen, err := d.k.Generation(); err == nil && gen != d.gen {
			d.lost = true // somebody committed; what, we cannot tell
		}
	}
	if !d.known || (!d.lost && d.drift.empty()) {
		return Repair{}, false, next
	}
	if w := sp.wait(time.Now()); w > 0 {
		next.after = min(next.after, w)
		return Repair{}, false, next
	}
	rep := d.repair()
	sp.done(time.Now())
	return rep, true, next
}

// takeAnnouncements takes what the inbox holds into d.gen, d.drift and
// d.lost, and returns a channel closed at the next announcement. When the
// subscription has ended, the Dataplane polls from then on and reads the
// tables back once, since whatever came after its end went unnoticed.
func (d *Dataplane) takeAnnouncements() <-chan struct{} {
	commits, closed, changed := d.inbox.take()
	for _, c := range commits {
		d.observe(c)
	}
	if closed {
		d.inbox = nil
		d.lost = true
		return nil
	}
	return changed
}

// observe records one announced transaction: a generation we do not know
// yet, with its changes to our tables, or a loss.
func (d *Dataplane) observe(c nft.Commit) {
	switch {
	case !d.known:
		return // the next Sync replaces our tables whole
	case c.Lost:
		d.lost = true
		return
	case !behind(d.gen, c.Gen):
		return // known already: ours, or read back since
	case c.Gen != nft.NextGeneration(d.gen):
		d.lost = true // a transaction in between went unannounced
	}
	d.gen = c.Gen
	if !d.lost {
		d.drift.add(c.Changes)
	}
}

// behind reports whether generation have comes before want.
func behind(have, want uint32) bool { return int32(want-have) > 0 }

// catchUp takes announcements until it knows every transaction up to
// generation gen, waiting up to catchUpWait for those not announced yet.
// Without a subscription, or when they do not come, the tables must be read
// back (d.lost).
func (d *Dataplane) catchUp(gen uint32) {
	deadline := time.Now().Add(catchUpWait)
	for !d.lost && behind(d.gen, gen) {
		if d.inbox == nil {
			d.lost = true
			return
		}
		changed := d.takeAnnouncements()
		if d.lost || !behind(d.gen, gen) {
			return
		}
		if !wait(changed, deadline) {
			d.lost = true
		}
	}
}

// repair restores what others changed: the announced drift, or, when
// announcements were lost, whatever a read-back finds.
func (d *Dataplane) repair() Repair {
	start := time.Now()
	var rep Repair
	if !d.lost {
		rep.Ops, rep.Err = d.repairDrift()
	}
	if rep.Err == nil && d.lost {
		rep.ReadBack = true
		rep.Ops, rep.Err = d.readBack()
	}
	rep.Elapsed = time.Since(start)
	return rep
}

// repairDrift commits the plan that undoes the drift, made from the
// generation the last announcement brought. When somebody commits in
// between, the kernel refuses it; the announcement of that commit then
// adds to the drift and the plan is made again.
func (d *Dataplane) repairDrift() (int, error) {
	for attempt := 0; ; attempt++ {
		plan := d.drift.plan(d.compiled)
		plan.Gen = d.gen
		err := d.apply(plan)
		switch {
		case err == nil:
			d.drift = drift{}
			return len(plan.Ops), nil
		case !nft.IsConflict(err) || attempt == maxReplans:
			d.known = false
			return 0, fmt.Errorf("repair: %w", err)
		}
		gen, err := d.k.Generation()
		if err != nil {
			d.known = false
			return 0, fmt.Errorf("repair: %w", err)
		}
		if d.catchUp(gen); d.lost {
			return 0, nil
		}
	}
}

// readBack reads our tables back and commits the plan from them to the
// mirror.
func (d *Dataplane) readBack() (int, error) {
	for attempt := 0; ; attempt++ {
		n, err := d.readBackOnce()
		if err == nil || !nft.IsConflict(err) || attempt == maxReplans {
			if err != nil {
				d.known = false
			}
			return n, err
		}
	}
}

func (d *Dataplane) readBackOnce() (int, error) {
	gen, err := d.k.Generation()
	if err != nil {
		return 0, fmt.Errorf("read back: %w", err)
	}
	read, err := d.k.Read()
	if err != nil {
		return 0, fmt.Errorf("read back: %w", err)
	}
	plan := nft.Diff(read, d.compiled.Ruleset())
	plan.Gen = gen
	if err := d.apply(plan); err != nil {
		return 0, fmt.Errorf("read back: %w", err)
	}
	d.lost, d.drift = false, drift{}
	return len(plan.Ops), nil
}

// spacing slows repairs down when somebody keeps changing our tables (two
// agents fighting over them): the first repairs of a fight are made at
// once, then each waits twice as long as the one before, up to
// maxRepairWait. A repair needed more than a second after it was allowed
// ends the fight.
type spacing struct {
	next   time.Time // the earliest time of the next repair
	streak int       // repairs in the fight so far
}

const (
	freeRepairs   = 5
	firstWait     = 100 * time.Millisecond
	maxRepairWait = 10 * time.Second
	fightGap      = time.Second
)

func (s *spacing) wait(now time.Time) time.Duration { return max(s.next.Sub(now), 0) }

func (s *spacing) done(now time.Time) {
	if now.Sub(s.next) < fightGap {
		s.streak++
	} else {
		s.streak = 1
	}
	s.next = now
	if s.streak > freeRepairs {
		s.next = now.Add(min(firstWait<<min(s.streak-freeRepairs-1, 16), maxRepairWait))
	}
}
