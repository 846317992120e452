package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// PollTimeout bounds every wait for nftproxy to follow a change. It is
// generous: informers, the sync loop's minSyncPeriod and a busy 2-core
// machine all add up. Tests never assert on how long it took.
const PollTimeout = 60 * time.Second

// pollInterval is the pause between two checks.
const pollInterval = 200 * time.Millisecond

// RequestTimeout bounds one request through the node.
const RequestTimeout = 2 * time.Second

// Eventually calls check until it returns nil, failing the test with the
// last error after PollTimeout, or at once when the test has failed
// meanwhile (e.g. nftproxy exited).
func Eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	EventuallyWithin(t, what, PollTimeout, check)
}

// EventuallyWithin is Eventually with a timeout of its own, for a wait
// that PollTimeout does not cover.
func EventuallyWithin(t testing.TB, what string, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if t.Failed() {
			t.Fatalf("%s: gave up, the test failed meanwhile: %v", what, err)
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("%s: not true after %v: %v", what, timeout, err)
		}
		time.Sleep(pollInterval)
	}
}

// Ask sends one TCP request from the external client to addr ("ip:port")
// and returns the name of the backend that answered.
func (e *Env) Ask(addr string) (string, error) {
	reply, err := e.Lab.Client.RequestTCP(addr, RequestTimeout)
	if err != nil {
		return "", err
	}
	r, err := lab.ParseReply(reply)
	if err != nil {
		return "", err
	}
	return r.Name, nil
}

// Spread sends n requests to addr and counts answers by backend name. It
// stops at the first failure.
func (e *Env) Spread(addr string, n int) (map[string]int, error) {
	seen := map[string]int{}
	for range n {
		name, err := e.Ask(addr)
		if err != nil {
			return seen, err
		}
		seen[name]++
	}
	return seen, nil
}

// AnsweredBy returns a check that n requests to addr are all answered, and
// by exactly the backends named (each at least once when n allows it;
// random choice may miss one in a short run, so the check is retried).
func (e *Env) AnsweredBy(addr string, n int, names ...string) func() error {
	return func() error {
		seen, err := e.Spread(addr, n)
		if err != nil {
			return err
		}
		if len(seen) != len(names) {
			return fmt.Errorf("answers from %v, want exactly %v", seen, names)
		}
		for _, name := range names {
			if seen[name] == 0 {
				return fmt.Errorf("answers from %v, want exactly %v", seen, names)
			}
		}
		return nil
	}
}

// Refused returns a check that a request to addr is refused: a Service
// without endpoints.
func (e *Env) Refused(addr string) func() error {
	return func() error {
		name, err := e.Ask(addr)
		if err == nil {
			return fmt.Errorf("answered by %s, want refused", name)
		}
		if !lab.IsRefused(err) {
			return fmt.Errorf("want refused: %w", err)
		}
		return nil
	}
}

// Unserved returns a check that a request to addr fails without reaching
// a backend and without a reject from the proxy: no rule has the address.
// The node routes it out its uplink, where it is dropped: the request times
// out.
func (e *Env) Unserved(addr string) func() error {
	return func() error {
		name, err := e.Ask(addr)
		switch {
		case err == nil:
			return fmt.Errorf("answered by %s, want no service", name)
		case lab.IsRefused(err):
			return fmt.Errorf("refused (a Service without endpoints?), want no service: %w", err)
		}
		return nil
	}
}
