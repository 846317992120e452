package agent

import (
	"runtime/debug"
	"slices"
	"time"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/metrics"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/tracker"
)

// sync programs the current snapshot; the runner calls it and retries it
// with backoff when it fails.
func (a *Agent) sync() error {
	start := a.clock.Now()
	change := a.tracker.Take()
	node, nodeChanged := a.takeNode()
	in := dataplane.Input{
		Snapshot: change.Snapshot,
		Node:     node,
		Options:  CompilerOptions(a.cfg.Proxy, node),
		Changed:  change.Changed,
		Full:     a.fullDue(start) || nodeChanged,
	}
	res, err := a.cfg.Dataplane.Sync(in)
	a.events.Problems(res.Problems, covered(in, res))
	elapsed := a.clock.Since(start)
	if err != nil {
		a.failed(res, change, nodeChanged, err, elapsed)
		return err
	}
	a.succeeded(in, res, change, start, elapsed)
	return nil
}

// fullDue reports whether this sync must reconcile everything against the
// kernel: the first one, the one after a failure, and one per syncPeriod.
func (a *Agent) fullDue(now time.Time) bool {
	return a.forceFull || a.lastFull.IsZero() || now.Sub(a.lastFull) >= a.cfg.Proxy.SyncPeriod.Duration
}

// covered tells the event reporter which Services this sync looked at.
func covered(in dataplane.Input, res dataplane.Result) func(string) bool {
	if in.Full || res.Full {
		return func(string) bool { return true }
	}
	return func(key string) bool { return in.Changed[key] }
}

// takeNode returns the Node and whether it changed since the last take.
func (a *Agent) takeNode() (model.Node, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	changed := a.nodeChanged
	a.nodeChanged = false
	return a.node, changed
}

// failed puts the changes back for the next attempt, which is a full sync.
func (a *Agent) failed(res dataplane.Result, change tracker.Change, nodeChanged bool, err error, elapsed time.Duration) {
	a.tracker.Restore(change)
	if nodeChanged {
		a.mu.Lock()
		a.nodeChanged = true
		a.mu.Unlock()
	}
	a.forceFull = true
	a.setPending()
	if m := a.cfg.Metrics; m != nil {
		for _, f := range a.familiesOf(res) {
			m.SyncFailures.WithLabelValues(f).Inc()
		}
	}
	a.logger.Error(err, "Sync failed, will retry with a full sync", "elapsed", elapsed)
}

// succeeded records a committed sync (or one with nothing to do) and runs
// the hooks.
func (a *Agent) succeeded(in dataplane.Input, res dataplane.Result, change tracker.Change, start time.Time, elapsed time.Duration) {
	a.forceFull = false
	if in.Full || res.Full {
		a.lastFull = start
	}
	if a.cfg.Health != nil {
		a.cfg.Health.Updated()
	}
	a.setPending()
	a.observe(res, change, elapsed)
	a.logger.V(2).Info("Synced", "full", res.Full, "ops", res.Ops, "changed", len(in.Changed),
		"repaired", res.Repaired, "readBack", res.ReadBack, "replanned", res.Replanned, "problems", len(res.Problems), "elapsed", elapsed)
	if res.Repaired {
		a.logger.Info("Restored rules changed by someone else")
	}
	for _, h := range a.cfg.Hooks {
		h.AfterSync(a.prev, in.Snapshot, in.Node)
	}
	// The previous snapshot is read by nobody now: its arrays may become
	// the next snapshot's (tracker.Release).
	a.tracker.Release(a.prev)
	a.prev = in.Snapshot
	if res.Full {
		// A full transaction leaves garbage in proportion to the cluster
		// (the netlink batch, the plan); hand it back to the kernel now,
		// with one collection, rather than over minutes.
		debug.FreeOSMemory()
	}
}

// observe updates the metrics of a successful sync: the sync under each
// family it programmed, each EndpointSlice change under its own.
func (a *Agent) observe(res dataplane.Result, change tracker.Change, elapsed time.Duration) {
	fams := a.familiesOf(res)
	m := a.cfg.Metrics
	if m == nil {
		return
	}
	secs, now := elapsed.Seconds(), a.clock.Now()
	kind := m.SyncPartialDuration
	if res.Full {
		kind = m.SyncFullDuration
	}
	for _, f := range fams {
		m.SyncDuration.WithLabelValues(f).Observe(secs)
		kind.WithLabelValues(f).Observe(secs)
		m.LastSync.WithLabelValues(f).Set(float64(now.UnixNano()) / 1e9)
		// The failure counter exists, at 0, from the first sync: rate()
		// and increase() see a first failure only as a change from a
		// sample before it, so a series born at 1 would alert no one.
		m.SyncFailures.WithLabelValues(f)
	}
	setNoLocal(m, res.Families)
	if res.Ops > 0 {
		m.TransactionOps.Observe(float64(res.Ops))
		if res.Bytes > 0 {
			m.TransactionBytes.Observe(float64(res.Bytes))
		}
	}
	if res.Repaired {
		m.Repairs.Inc()
	}
	if res.ReadBack {
		m.NotificationsLost.Inc()
	}
	for _, t := range change.Triggers {
		m.NetworkProgramming.WithLabelValues(string(t.Family)).Observe(now.Sub(t.Time).Seconds())
	}
}

// setNoLocal publishes, for each family with a table, the Service ports
// whose Local traffic policy has no endpoint here; a family without a
// table has no such series.
func setNoLocal(m *metrics.Metrics, status []compile.FamilyStatus) {
	for _, f := range nft.Families {
		label := familyLabel(f)
		i := slices.IndexFunc(status, func(s compile.FamilyStatus) bool { return s.Family == f })
		if i < 0 {
			m.NoLocalEndpoints.DeleteLabelValues(metrics.PolicyInternal, label)
			m.NoLocalEndpoints.DeleteLabelValues(metrics.PolicyExternal, label)
			continue
		}
		m.NoLocalEndpoints.WithLabelValues(metrics.PolicyInternal, label).Set(float64(status[i].NoLocalInternal))
		m.NoLocalEndpoints.WithLabelValues(metrics.PolicyExternal, label).Set(float64(status[i].NoLocalExternal))
	}
}

// setPending publishes how many Services wait for a sync.
func (a *Agent) setPending() {
	m := a.cfg.Metrics
	if m == nil {
		return
	}
	svc, ep := a.tracker.Pending()
	m.ServiceChangesPending.Set(float64(svc))
	m.EndpointChangesPending.Set(float64(ep))
}
