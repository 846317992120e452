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
	services store[model.Service]          // by "namespace/name"
	slices   store[model.EndpointSlice]    // by the slice's "namespace/name"
	cidrs    map[string]*model.ServiceCIDR // by name
	// Services (by key) whose Service or EndpointSlices changed since the
	// last Take.
	svcChanged, epChanged map[string]bool
	// triggers holds, per Service, the EndpointSlice change times (from
	// endpoints.kubernetes.io/last-change-trigger-time) not yet synced.
	triggers map[string][]Trigger
}

// Trigger is one EndpointSlice change behind a sync: when the change that
// led to it happened (endpoints.kubernetes.io/last-change-trigger-time),
// and the address family of the slice.
type Trigger struct {
	Time   time.Time
	Family model.AddressType
}

// New returns an empty Tracker; start is the current time.
func New(start time.Time) *Tracker {
	return &Tracker{
		start:      start,
		services:   newStore[model.Service](),
		slices:     newStore[model.EndpointSlice](),
		cidrs:      map[string]*model.ServiceCIDR{},
		svcChanged: map[string]bool{},
		epChanged:  map[string]bool{},
		triggers:   map[string][]Trigger{},
	}
}

// SetService records the Service called key ("namespace/name"); nil removes
// it (deleted, or not to be programmed). It reports whether anything changed.
func (t *Tracker) SetService(key string, svc *model.Service) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, replaced := t.services.replace(key, svc); !replaced {
		return false
	}
	t.svcChanged[key] = true
	return true
}

// SetSlice records the EndpointSlice called key; nil removes it. trigger is
// the slice's last-change-trigger-time, zero when absent. It reports whether
// anything changed.
func (t *Tracker) SetSlice(key string, sl *model.EndpointSlice, trigger time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	old, replaced := t.slices.replace(key, sl)
	if !replaced {
		return false
	}
	// A slice that moved to another Service changes both.
	for _, s := range []*model.EndpointSlice{old, sl} {
		if s != nil {
			t.epChanged[s.Namespace+"/"+s.Service] = true
		}
	}
	// One change, one latency, as in kube-proxy: the trigger time of the
	// version recorded now, for its Service. A deleted slice carries the
	// time of its last update, not of this change, and counts none.
	if sl != nil && !trigger.IsZero() && !trigger.Before(t.start) {
		svc := sl.Namespace + "/" + sl.Service
		t.triggers[svc] = append(t.triggers[svc], Trigger{Time: trigger, Family: sl.AddressType})
	}
	return true
}

// SetServiceCIDR records the ServiceCIDR called key; nil removes it. It
// reports whether anything changed. A ServiceCIDR changes no Service: the
// sync it wakes compares the snapshot's ServiceCIDRs with what it
// programmed.
func (t *Tracker) SetServiceCIDR(key string, sc *model.ServiceCIDR) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if reflect.DeepEqual(t.cidrs[key], sc) {
		return false
	}
	if sc == nil {
		delete(t.cidrs, key)
	} else {
		t.cidrs[key] = sc
	}
	return true
}
