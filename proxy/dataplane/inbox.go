package dataplane

import (
	"sync"
	"time"

	"github.com/nftproxy/nftproxy/nft"
)

// inbox queues the announcements of a subscription for the Dataplane,
// which takes them under its own lock: from Watch's goroutine, and from a
// Sync that must know every transaction up to the generation it plans
// from. A goroutine of its own feeds it, so that nothing received waits for
// the Dataplane's lock in between.
type inbox struct {
	mu      sync.Mutex
	queue   []nft.Commit
	closed  bool          // the subscription ended
	changed chan struct{} // closed, and replaced, at every push and at close
}

func newInbox() *inbox { return &inbox{changed: make(chan struct{})} }

// feed moves the announcements from ch into the inbox until ch closes.
func (in *inbox) feed(ch <-chan nft.Commit) {
	for c := range ch {
		in.mu.Lock()
		in.queue = append(in.queue, c)
		in.signal()
		in.mu.Unlock()
	}
	in.mu.Lock()
	in.closed = true
	in.signal()
	in.mu.Unlock()
}

func (in *inbox) signal() {
	close(in.changed)
	in.changed = make(chan struct{})
}

// take returns what is queued, whether the subscription ended, and a
// channel closed at the next change.
func (in *inbox) take() ([]nft.Commit, bool, <-chan struct{}) {
	in.mu.Lock()
	defer in.mu.Unlock()
	q := in.queue
	in.queue = nil
	return q, in.closed, in.changed
}

// wait blocks until ch closes or the deadline passes, and reports whether
// ch closed.
func wait(ch <-chan struct{}, deadline time.Time) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
