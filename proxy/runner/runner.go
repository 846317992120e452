package runner

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Func is the function a Runner runs. An error makes the Runner retry it
// with backoff.
type Func func() error

// Config bounds the frequency of runs.
type Config struct {
	// MinInterval is the least time between the starts of two runs.
	MinInterval time.Duration
	// MaxInterval is the longest time without a run, and the cap of the
	// retry backoff.
	MaxInterval time.Duration
	// Backoff is the delay before the first retry after a failure; it
	// doubles per consecutive failure. Zero means one second.
	Backoff time.Duration
	// Clock is the time source; nil means the real clock.
	Clock clock.Clock
}

// Runner runs a Func on the schedule described in the package comment.
type Runner struct {
	fn    Func
	clock clock.Clock
	kick  chan struct{}
	s     schedule
}

// New returns a Runner for fn. It does nothing until Loop is called.
func New(fn Func, c Config) *Runner {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	return &Runner{
		fn:    fn,
		clock: c.Clock,
		kick:  make(chan struct{}, 1),
		s:     schedule{min: c.MinInterval, max: c.MaxInterval, backoff: c.Backoff},
	}
}

// Kick asks for a run as soon as MinInterval allows. It never blocks; kicks
// before the run starts are merged into one.
func (r *Runner) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Loop runs fn on schedule until ctx is done; the first run is at once.
// Call it once, after the inputs fn reads are ready.
func (r *Runner) Loop(ctx context.Context) {
	for ctx.Err() == nil {
		wait := r.s.next().Sub(r.clock.Now())
		if wait <= 0 {
			r.runOnce()
			continue
		}
		r.wait(ctx, wait)
	}
}

// wait blocks until the next run is due, a kick arrives, or ctx is done.
func (r *Runner) wait(ctx context.Context, d time.Duration) {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-r.kick:
		r.s.pending = true
	case <-t.C():
	}
}

func (r *Runner) runOnce() {
	// A kick already queued belongs to this run: the function reads the
	// latest state.
	select {
	case <-r.kick:
	default:
	}
	r.s.started(r.clock.Now())
	r.s.finished(r.fn())
}
