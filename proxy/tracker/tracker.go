// Package tracker records what the informers see, already converted to
// proxy/model, and hands the sync loop a consistent snapshot together with
// the Services changed since the last successful sync.
//
// Informer handlers only record here; they never sync. A change that leaves
// the model value as it was (a status or annotation update nftproxy does not
// read) is not recorded, so it neither wakes the sync loop nor appears in
// Changed.
package tracker

import (
	"reflect"
	"sync"
	"time"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Tracker is safe for concurrent use by informer handlers and the sync loop.
type Tracker struct {
	// start is when the tracker was made; trigger times before it describe
	// changes made before this process ran and are not reported, as in
	// kube-proxy (they would report the downtime, not programming latency).
	start time.Time

	mu       sync.Mutex
	services store[model.Service]       // by "namespace/name"
	slices   store[model.EndpointSlice] // by the slice's "namespace/name"
	// Services (by key) whose Service or EndpointSlices changed since the
	// last Take.
	svcChanged, epChanged map[string]bool
	// triggers holds, per Service, the EndpointSlice change times (from
	// endpoints.kubernetes.io/last-change-trigger-time) not yet synced.
	triggers map[string][]time.Time
}

// New returns an empty Tracker; start is the current time.
func New(start time.Time) *Tracker {
	return &Tracker{
		start:      start,
		services:   newStore[model.Service](),
		slices:     newStore[model.EndpointSlice](),
		svcChanged: map[string]bool{},
		epChanged:  map[string]bool{},
		triggers:   map[string][]time.Time{},
	}
}

// SetService records the Service called key ("namespace/name"); nil removes
// it (deleted, or not to be programmed). It reports whether anything changed.
func (t *Tracker) SetService(key string, svc *model.Service) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.services.objs[key]
	if reflect.DeepEqual(old, svc) {
		return false
	}
	t.services.set(key, svc)
	t.svcChanged[key] = true
	return true
}

// SetSlice records the EndpointSlice called key; nil removes it. trigger is
// the slice's last-change-trigger-time, zero when absent. It reports whether
// anything changed.
func (t *Tracker) SetSlice(key string, sl *model.EndpointSlice, trigger time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.slices.objs[key]
	if reflect.DeepEqual(old, sl) {
		return false
	}
	t.slices.set(key, sl)
	// A slice that moved to another Service changes both; one that stayed
	// changes its Service once, and its trigger time counts once.
	for i, s := range []*model.EndpointSlice{old, sl} {
		if s == nil || (i == 1 && old != nil && old.Namespace == s.Namespace && old.Service == s.Service) {
			continue
		}
		svc := s.Namespace + "/" + s.Service
		t.epChanged[svc] = true
		if !trigger.IsZero() && !trigger.Before(t.start) {
			t.triggers[svc] = append(t.triggers[svc], trigger)
		}
	}
	return true
}
