package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// harness runs a Runner on a fake clock; every run reports on runs and
// returns the next error from results (nil when empty).
type harness struct {
	t       *testing.T
	clock   *clocktesting.FakeClock
	r       *Runner
	runs    chan time.Time
	results chan error
}

func newHarness(t *testing.T) *harness {
	h := &harness{
		t:       t,
		clock:   clocktesting.NewFakeClock(t0),
		runs:    make(chan time.Time, 10),
		results: make(chan error, 10),
	}
	h.r = New(h.run, Config{MinInterval: time.Second, MaxInterval: 30 * time.Second, Backoff: 2 * time.Second, Clock: h.clock})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.r.Loop(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *harness) run() error {
	h.runs <- h.clock.Now()
	select {
	case err := <-h.results:
		return err
	default:
		return nil
	}
}

// expectRun waits for the next run and checks the fake time it started at.
// The timeout only guards against a hung test; it is not a measurement.
func (h *harness) expectRun(at time.Duration) {
	h.t.Helper()
	select {
	case got := <-h.runs:
		if want := t0.Add(at); !got.Equal(want) {
			h.t.Fatalf("run at %v, want %v", got.Sub(t0), at)
		}
	case <-time.After(time.Minute):
		h.t.Fatalf("no run (want one at %v)", at)
	}
}

// stepWhenWaiting advances the fake clock once the loop waits on a timer.
func (h *harness) stepWhenWaiting(d time.Duration) {
	for !h.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	h.clock.Step(d)
}

func TestLoopPeriodic(t *testing.T) {
	h := newHarness(t)
	h.expectRun(0)
	h.stepWhenWaiting(30 * time.Second)
	h.expectRun(30 * time.Second)
	h.stepWhenWaiting(30 * time.Second)
	h.expectRun(60 * time.Second)
}

func TestLoopKickRunsAfterMinInterval(t *testing.T) {
	h := newHarness(t)
	h.expectRun(0)
	h.stepWhenWaiting(300 * time.Millisecond)
	for range 5 {
		h.r.Kick()
	}
	// Whether the loop has seen the kicks yet or not, the run is due one
	// MinInterval after the first, not earlier and once only.
	h.stepWhenWaiting(700 * time.Millisecond)
	h.expectRun(time.Second)
	h.stepWhenWaiting(30 * time.Second)
	h.expectRun(31 * time.Second)
}

func TestLoopRetriesWithBackoff(t *testing.T) {
	h := newHarness(t)
	h.results <- errors.New("rejected")
	h.results <- errors.New("rejected")
	h.expectRun(0)
	h.stepWhenWaiting(2 * time.Second)
	h.expectRun(2 * time.Second)
	h.stepWhenWaiting(4 * time.Second)
	h.expectRun(6 * time.Second)
	h.stepWhenWaiting(30 * time.Second)
	h.expectRun(36 * time.Second)
}
