//go:build integration

package e2e_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// TestRestartKeepsTraffic stops nftproxy with SIGTERM and starts it again
// while a client keeps opening connections through a Service: the rules
// stay in place while no proxy runs and the new proxy takes over without
// a gap, so not one connection fails.
func TestRestartKeepsTraffic(t *testing.T) {
	env := e2e.New(t, 3)
	proxy := env.StartProxy(t)
	b := env.Lab.Backends
	web := "10.96.3.10:80"
	env.Create(t, e2e.Service("web", "10.96.3.10", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("web", "http", b[0].IPv4, b[1].IPv4))
	e2e.Eventually(t, "web answered by pods 0 and 1", env.AnsweredBy(web, 20, b[0].Name, b[1].Name))

	load := startLoad(env, web)
	load.waitFor(t, 20)
	if err := proxy.Stop(); err != nil {
		t.Fatalf("nftproxy after SIGTERM: %v, want exit status 0", err)
	}
	load.waitFor(t, 20) // traffic while no proxy runs
	env.StartProxy(t)
	load.waitFor(t, 20)
	// The new proxy owns the table: a change made now reaches the kernel.
	env.Update(t, e2e.Slice("web", "http", b[1].IPv4, b[2].IPv4))
	e2e.Eventually(t, "the restarted proxy follows a scale change", env.AnsweredBy(web, 20, b[1].Name, b[2].Name))
	load.waitFor(t, 20)

	ok, failures := load.stop()
	t.Logf("%d connections during the restart, %d failed", ok+len(failures), len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d connections failed, first: %v", len(failures), ok+len(failures), failures[0])
	}
}

// load opens one connection after another until stopped.
type load struct {
	ok       atomic.Int64
	mu       sync.Mutex
	failures []error
	quit     chan struct{}
	done     chan struct{}
}

// maxLoad bounds the connections one load opens.
const maxLoad = 100_000

func startLoad(env *e2e.Env, addr string) *load {
	l := &load{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for range maxLoad {
			select {
			case <-l.quit:
				return
			default:
			}
			if _, err := env.Ask(addr); err != nil {
				l.mu.Lock()
				l.failures = append(l.failures, fmt.Errorf("%s: %w", time.Now().Format(time.TimeOnly), err))
				l.mu.Unlock()
				continue
			}
			l.ok.Add(1)
		}
	}()
	return l
}

// waitFor waits until n more connections succeeded, so that every phase of
// the restart sees traffic.
func (l *load) waitFor(t *testing.T, n int64) {
	t.Helper()
	target := l.ok.Load() + n
	e2e.Eventually(t, fmt.Sprintf("%d more connections", n), func() error {
		if got := l.ok.Load(); got < target {
			return fmt.Errorf("%d of %d", got, target)
		}
		return nil
	})
}

// stop ends the load and returns its counts.
func (l *load) stop() (int, []error) {
	close(l.quit)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return int(l.ok.Load()), l.failures
}
