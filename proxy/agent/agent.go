// Package agent is the node agent: it watches Services, EndpointSlices and
// this node's Node through client-go informers, and keeps the data plane in
// step through a rate-limited sync loop.
//
// # Flow
//
// Informer handlers convert objects with proxy/kube and record them in a
// proxy/tracker; they never sync. They kick a proxy/runner, which runs one
// sync at most every minSyncPeriod, at least every syncPeriod, and retries
// failures with backoff. The first sync runs only after all three informers
// have synced, so no rules are built from half-read state.
//
// Each sync hands the data plane the snapshot and the Services changed since
// the last successful sync; the data plane decides between a partial and a
// full transaction. After a successful sync the agent updates health and
// metrics, reports objects left out as events, and calls the SyncHooks.
//
// # Lifecycle
//
// Run returns when its context is cancelled and leaves the rules in place:
// a restarting agent (a DaemonSet rollout) must not cut traffic, and the next
// agent's first sync replaces the tables in one transaction. While the API
// server is away the informers retry with backoff and the rules stay.
package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/events"
	"github.com/nftproxy/nftproxy/proxy/healthz"
	"github.com/nftproxy/nftproxy/proxy/metrics"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/runner"
	"github.com/nftproxy/nftproxy/proxy/tracker"
)

// Dataplane programs the kernel: *dataplane.Dataplane, or a fake in tests.
type Dataplane interface {
	Sync(in dataplane.Input) (dataplane.Result, error)
}

// watcher is implemented by data planes that notice changes made to our
// tables by someone else and repair them by themselves, reporting each
// repair.
type watcher interface {
	Watch(ctx context.Context) <-chan dataplane.Repair
}

// Config is what an Agent needs. Client, NodeName, Proxy and Dataplane are
// required.
type Config struct {
	Client    kubernetes.Interface
	NodeName  string
	Proxy     *config.Configuration // validated
	Dataplane Dataplane
	// Hooks run after every successful sync, in order.
	Hooks []SyncHook
	// Recorder receives Warning events; nil drops them.
	Recorder record.EventRecorder
	// Metrics and Health are updated when set.
	Metrics *metrics.Metrics
	Health  *healthz.Server
	// Clock is the time source; nil means the real clock.
	Clock clock.Clock
}

// Agent runs the watch and sync loop for one node.
type Agent struct {
	cfg     Config
	clock   clock.Clock
	logger  klog.Logger
	tracker *tracker.Tracker
	events  *events.Reporter
	runner  *runner.Runner
	inf     watches

	// Sync loop state; only the runner goroutine touches it.
	prev      *model.Snapshot
	lastFull  time.Time
	forceFull bool

	mu          sync.Mutex
	node        model.Node
	nodeChanged bool
	// families are the ip_family labels of the tables the last sync
	// programmed (both families before the first), for the metrics of
	// what happens between syncs.
	families []string
}

// New returns an Agent; nothing runs until Run.
func New(c Config) *Agent {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Recorder == nil {
		c.Recorder = &record.FakeRecorder{} // nil Events channel: drops them
	}
	a := &Agent{
		cfg:      c,
		clock:    c.Clock,
		logger:   klog.Background().WithName("agent"),
		tracker:  tracker.New(c.Clock.Now()),
		node:     model.Node{Name: c.NodeName},
		families: []string{metrics.IPv4, metrics.IPv6},
	}
	a.inf = newWatches(c.Client, c.NodeName)
	a.events = events.New(c.Recorder, a.inf.uid)
	a.runner = runner.New(a.sync, runner.Config{
		MinInterval: c.Proxy.MinSyncPeriod.Duration,
		MaxInterval: c.Proxy.SyncPeriod.Duration,
		Clock:       c.Clock,
	})
	// Adding handlers fails only on an informer already stopped; these
	// have not started.
	_ = a.inf.addHandlers(a)
	return a
}

// Run watches and syncs until ctx is done; the rules stay in place after.
// It returns nil: a stop before the informers synced leaves the kernel as
// it was.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.start(ctx); err != nil {
		// Stopped before the first sync (the API server may be away): not
		// a failure, and nothing was touched.
		a.logger.Info("Stopped before the informers synced; rules left as they were")
		return nil
	}
	if w, ok := a.cfg.Dataplane.(watcher); ok {
		go a.watchExternal(ctx, w.Watch(ctx))
	}
	a.logger.Info("Informers synced, starting the sync loop",
		"minSyncPeriod", a.cfg.Proxy.MinSyncPeriod.Duration, "syncPeriod", a.cfg.Proxy.SyncPeriod.Duration)
	a.runner.Loop(ctx)
	a.logger.Info("Stopped; rules left in place")
	return nil
}

// start starts the informers and waits until all of them have synced.
func (a *Agent) start(ctx context.Context) error {
	a.inf.start(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), a.inf.hasSynced...) {
		return fmt.Errorf("informers did not sync: %w", context.Cause(ctx))
	}
	return nil
}

// watchExternal records the repairs the data plane makes of changes
// someone else made to our tables; after a failed one it asks for a sync,
// which replaces the tables whole.
func (a *Agent) watchExternal(ctx context.Context, ch <-chan dataplane.Repair) {
	for {
		select {
		case <-ctx.Done():
			return
		case rep, ok := <-ch:
			if !ok {
				return
			}
			a.repaired(rep)
		}
	}
}

func (a *Agent) repaired(rep dataplane.Repair) {
	m := a.cfg.Metrics
	if m != nil && rep.ReadBack {
		m.NotificationsLost.Inc()
	}
	if rep.Err != nil {
		a.logger.Error(rep.Err, "Repairing rules changed by someone else failed, queueing a full sync")
		a.queued()
		a.runner.Kick()
		return
	}
	if rep.Ops == 0 {
		a.logger.V(2).Info("Ruleset changed by someone else; our tables are intact", "readBack", rep.ReadBack)
		return
	}
	if m != nil {
		m.Repairs.Inc()
	}
	a.logger.Info("Restored rules changed by someone else", "ops", rep.Ops, "readBack", rep.ReadBack, "elapsed", rep.Elapsed)
}

// queued records that a change waits for the data plane.
func (a *Agent) queued() {
	if a.cfg.Health != nil {
		a.cfg.Health.QueuedUpdate()
	}
	if m := a.cfg.Metrics; m != nil {
		a.mu.Lock()
		fams := a.families
		a.mu.Unlock()
		for _, f := range fams {
			m.LastQueued.WithLabelValues(f).Set(float64(a.clock.Now().UnixNano()) / 1e9)
		}
	}
}

// familiesOf returns the ip_family labels of the tables res programmed,
// and remembers them; when res does not say (a sync that failed before
// planning), those of the last sync that did.
func (a *Agent) familiesOf(res dataplane.Result) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(res.Families) == 0 {
		return a.families
	}
	a.families = make([]string, len(res.Families))
	for i, s := range res.Families {
		a.families[i] = familyLabel(s.Family)
	}
	return a.families
}

// familyLabel is kube-proxy's ip_family value for table family f.
func familyLabel(f nft.Family) string {
	if f == nft.IPv6 {
		return metrics.IPv6
	}
	return metrics.IPv4
}
