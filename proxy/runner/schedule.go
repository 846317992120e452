package runner

import "time"

// schedule decides when the next run is due. It holds no clock: callers pass
// the times in, so that the policy is tested as a pure function.
type schedule struct {
	min, max time.Duration
	backoff  time.Duration // first retry delay after a failure

	ran      bool      // a run has happened
	lastRun  time.Time // start of the last run
	pending  bool      // a kick arrived since the last run started
	failures int       // consecutive failed runs
}

// next returns when the next run is due; a time not after now means at once.
func (s *schedule) next() time.Time {
	if !s.ran {
		return time.Time{} // the first run is due at once
	}
	if s.failures > 0 {
		return s.lastRun.Add(s.retryDelay())
	}
	if s.pending {
		return s.lastRun.Add(s.min)
	}
	return s.lastRun.Add(s.max)
}

// retryDelay doubles the backoff per consecutive failure, up to max.
func (s *schedule) retryDelay() time.Duration {
	d := s.backoff
	for i := 1; i < s.failures && d < s.max; i++ {
		d *= 2
	}
	return min(d, s.max)
}

// started records that a run starts at now; the changes pending so far are
// part of it.
func (s *schedule) started(now time.Time) {
	s.ran = true
	s.lastRun = now
	s.pending = false
}

// finished records the outcome of the run that started last.
func (s *schedule) finished(err error) {
	if err != nil {
		s.failures++
		return
	}
	s.failures = 0
}
