package tracker

import (
	"maps"
	"slices"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Change is what one sync programs.
type Change struct {
	// Snapshot is every recorded Service, EndpointSlice and ServiceCIDR,
	// sorted by key. It is never modified afterwards, until it is handed
	// back with Release.
	Snapshot *model.Snapshot
	// Changed holds the Services ("namespace/name") whose Service or
	// EndpointSlices changed since the last Take.
	Changed map[string]bool
	// Triggers are the EndpointSlice changes behind Changed, for the
	// network programming latency: one per change.
	Triggers []Trigger

	svcChanged, epChanged map[string]bool
	triggers              map[string][]Trigger
}

// Take returns the current snapshot and the changes since the last Take,
// and starts recording afresh.
func (t *Tracker) Take() Change {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Change{
		Snapshot:   t.snapshot(),
		Changed:    map[string]bool{},
		svcChanged: t.svcChanged,
		epChanged:  t.epChanged,
		triggers:   t.triggers,
	}
	maps.Copy(c.Changed, t.svcChanged)
	maps.Copy(c.Changed, t.epChanged)
	for _, ts := range t.triggers {
		c.Triggers = append(c.Triggers, ts...)
	}
	t.svcChanged, t.epChanged, t.triggers = map[string]bool{}, map[string]bool{}, map[string][]Trigger{}
	return c
}

// Restore puts back the changes of a Take whose sync failed, so that they
// stay pending (for the metrics and the next partial sync).
func (t *Tracker) Restore(c Change) {
	t.mu.Lock()
	defer t.mu.Unlock()
	maps.Copy(t.svcChanged, c.svcChanged)
	maps.Copy(t.epChanged, c.epChanged)
	for k, ts := range c.triggers {
		t.triggers[k] = append(ts, t.triggers[k]...)
	}
}

// Pending returns how many Services have a Service change and how many have
// an EndpointSlice change waiting for a sync.
func (t *Tracker) Pending() (services, endpoints int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.svcChanged), len(t.epChanged)
}

// snapshot returns the current objects in key order; t.mu is held.
func (t *Tracker) snapshot() *model.Snapshot {
	s := &model.Snapshot{Services: t.services.snapshot(), Slices: t.slices.snapshot()}
	for _, k := range slices.Sorted(maps.Keys(t.cidrs)) {
		s.ServiceCIDRs = append(s.ServiceCIDRs, *t.cidrs[k])
	}
	return s
}
