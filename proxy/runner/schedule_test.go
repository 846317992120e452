package runner

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// event is one step of a schedule test: a run that starts (with its
// outcome) or a kick, at an offset from t0.
type event struct {
	at   time.Duration
	kick bool
	fail bool
}

func TestScheduleNext(t *testing.T) {
	failed := errors.New("rejected")
	tests := []struct {
		name   string
		events []event
		want   time.Duration // offset from t0 of the next run
	}{
		{name: "first run at once", want: -1},
		{name: "idle: periodic at max", events: []event{{at: 0}}, want: 30 * time.Second},
		{name: "kick after a run: min after its start", events: []event{{at: 0}, {at: 200 * time.Millisecond, kick: true}}, want: time.Second},
		{name: "kick long after a run: at once", events: []event{{at: 0}, {at: 10 * time.Second, kick: true}}, want: time.Second},
		{name: "many kicks: still one run per min", events: []event{
			{at: 0}, {at: 100 * time.Millisecond, kick: true}, {at: 200 * time.Millisecond, kick: true}, {at: 900 * time.Millisecond, kick: true},
		}, want: time.Second},
		{name: "kicks were part of the run", events: []event{{at: 0, kick: true}, {at: 5 * time.Second}}, want: 35 * time.Second},
		{name: "failure: retry after backoff", events: []event{{at: 0, fail: true}}, want: 2 * time.Second},
		{name: "kick does not shorten backoff", events: []event{{at: 0, fail: true}, {at: 100 * time.Millisecond, kick: true}}, want: 2 * time.Second},
		{name: "backoff doubles", events: []event{{at: 0, fail: true}, {at: 2 * time.Second, fail: true}, {at: 6 * time.Second, fail: true}}, want: 14 * time.Second},
		{name: "backoff capped at max", events: []event{
			{at: 0, fail: true}, {at: 1, fail: true}, {at: 2, fail: true}, {at: 3, fail: true}, {at: 4, fail: true}, {at: 5, fail: true},
		}, want: 5 + 30*time.Second},
		{name: "success resets backoff", events: []event{{at: 0, fail: true}, {at: 2 * time.Second}}, want: 32 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := schedule{min: time.Second, max: 30 * time.Second, backoff: 2 * time.Second}
			for _, e := range tc.events {
				if e.kick {
					s.pending = true
					continue
				}
				s.started(t0.Add(e.at))
				var err error
				if e.fail {
					err = failed
				}
				s.finished(err)
			}
			want := t0.Add(tc.want)
			if tc.want < 0 {
				want = time.Time{}
			}
			if got := s.next(); !got.Equal(want) {
				t.Errorf("next() = %v after t0, want %v", got.Sub(t0), want.Sub(t0))
			}
		})
	}
}
