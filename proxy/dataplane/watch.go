package dataplane

import (
	"context"
	"time"
)

// pollInterval is how often Watch reads the ruleset generation: one small
// netlink request, so that an external change is noticed well within the
// second the agent promises.
const pollInterval = 200 * time.Millisecond

// Watch returns a channel that receives when the ruleset generation moved
// for a reason other than our own commits: somebody else committed a
// transaction in this namespace. The sync loop should then Sync, which reads
// our tables back and repairs them (Result.Repaired). It fires once per
// foreign generation, only while the Dataplane knows what it committed
// (after a failed Sync the next one replaces our tables anyway). Watch stops
// when ctx is done; the channel is never closed.
//
// A transaction on another table (a CNI's, a host firewall's) moves the
// generation too: the Sync that follows reads our tables, finds them
// intact and commits nothing.
func (d *Dataplane) Watch(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go d.watch(ctx, ch)
	return ch
}

func (d *Dataplane) watch(ctx context.Context, ch chan<- struct{}) {
	t := time.NewTicker(d.pollEvery())
	defer t.Stop()
	var last uint32
	fired := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		gen, moved := d.external()
		if !moved || (fired && gen == last) {
			continue
		}
		last, fired = gen, true
		select {
		case ch <- struct{}{}:
		default: // a notification is pending already
		}
	}
}

// external returns the current generation and whether it differs from our
// last commit's. A running Sync owns the connection and will check the
// generation itself, so external then reports nothing.
func (d *Dataplane) external() (uint32, bool) {
	if !d.mu.TryLock() {
		return 0, false
	}
	defer d.mu.Unlock()
	if !d.known {
		return 0, false
	}
	gen, err := d.k.Generation()
	if err != nil {
		return 0, false
	}
	return gen, gen != d.gen
}

func (d *Dataplane) pollEvery() time.Duration {
	if d.poll > 0 {
		return d.poll
	}
	return pollInterval
}
