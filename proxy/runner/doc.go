// Package runner runs one function (the sync) on a schedule bounded at both
// ends, as kube-proxy's BoundedFrequencyRunner does:
//
//   - Kick asks for a run soon. Kicks arriving faster than MinInterval are
//     batched: at most one run per MinInterval, counted from the start of the
//     previous run, however many changes arrive.
//   - Without kicks the function still runs every MaxInterval (the periodic
//     reconcile).
//   - A failed run is retried with exponential backoff, from Backoff up to
//     MaxInterval; kicks do not shorten the backoff, so a broken kernel or a
//     rejected transaction is not hammered under churn.
//
// The scheduling decision is a pure function of the state and the time
// (schedule.next), so it is tested without goroutines; Loop is a thin shell
// around it driven by an injectable clock.
package runner
