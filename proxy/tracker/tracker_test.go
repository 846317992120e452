package tracker

import (
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nftproxy/nftproxy/proxy/model"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func svc(name string, port uint16) *model.Service {
	return &model.Service{Namespace: "ns", Name: name, Type: model.ClusterIP,
		ClusterIPs: []netip.Addr{netip.MustParseAddr("10.96.0.1")},
		Ports:      []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: port}}}
}

func slice(name, service string, ip string) *model.EndpointSlice {
	return &model.EndpointSlice{Namespace: "ns", Name: name, Service: service, AddressType: model.IPv4,
		Endpoints: []model.Endpoint{{Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Ready: true}}}
}

func TestChanged(t *testing.T) {
	tests := []struct {
		name        string
		steps       func(tr *Tracker)
		wantChanged []string
		wantPending [2]int
	}{
		{name: "nothing", steps: func(*Tracker) {}},
		{name: "service added", steps: func(tr *Tracker) { tr.SetService("ns/web", svc("web", 80)) },
			wantChanged: []string{"ns/web"}, wantPending: [2]int{1, 0}},
		{name: "slice added: its Service changed", steps: func(tr *Tracker) { tr.SetSlice("ns/web-1", slice("web-1", "web", "10.0.0.1"), time.Time{}) },
			wantChanged: []string{"ns/web"}, wantPending: [2]int{0, 1}},
		{name: "slice moved to another Service: both", steps: func(tr *Tracker) {
			tr.SetSlice("ns/x", slice("x", "web", "10.0.0.1"), time.Time{})
			tr.Take()
			tr.SetSlice("ns/x", slice("x", "api", "10.0.0.1"), time.Time{})
		}, wantChanged: []string{"ns/api", "ns/web"}, wantPending: [2]int{0, 2}},
		{name: "same value again: not a change", steps: func(tr *Tracker) {
			tr.SetService("ns/web", svc("web", 80))
			tr.Take()
			if tr.SetService("ns/web", svc("web", 80)) {
				panic("an equal Service counted as a change")
			}
		}},
		{name: "deleting an unknown object: not a change", steps: func(tr *Tracker) {
			tr.SetService("ns/web", nil)
			tr.SetSlice("ns/web-1", nil, time.Time{})
		}},
		{name: "several changes, one key", steps: func(tr *Tracker) {
			tr.SetService("ns/web", svc("web", 80))
			tr.SetService("ns/web", svc("web", 81))
			tr.SetSlice("ns/web-1", slice("web-1", "web", "10.0.0.1"), time.Time{})
		}, wantChanged: []string{"ns/web"}, wantPending: [2]int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(t0)
			tc.steps(tr)
			s, e := tr.Pending()
			if got := [2]int{s, e}; got != tc.wantPending {
				t.Errorf("Pending() = %v, want %v", got, tc.wantPending)
			}
			c := tr.Take()
			if diff := cmp.Diff(tc.wantChanged, keys(c.Changed), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
			if again := tr.Take(); len(again.Changed) != 0 {
				t.Errorf("second Take: Changed = %v, want none", again.Changed)
			}
		})
	}
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

func TestSnapshotSortedAndStable(t *testing.T) {
	tr := New(t0)
	tr.SetService("ns/web", svc("web", 80))
	tr.SetService("ns/api", svc("api", 443))
	tr.SetSlice("ns/web-1", slice("web-1", "web", "10.0.0.1"), time.Time{})
	first := tr.Take().Snapshot
	tr.SetService("ns/web", nil)
	second := tr.Take().Snapshot

	want := &model.Snapshot{
		Services: []model.Service{*svc("api", 443), *svc("web", 80)},
		Slices:   []model.EndpointSlice{*slice("web-1", "web", "10.0.0.1")},
	}
	if diff := cmp.Diff(want, first, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("first snapshot changed after later updates (-want +got):\n%s", diff)
	}
	if len(second.Services) != 1 || second.Services[0].Name != "api" {
		t.Errorf("second snapshot services = %v, want api only", second.Services)
	}
}

func TestRestoreAndTriggers(t *testing.T) {
	tr := New(t0)
	before, after := t0.Add(-time.Minute), t0.Add(time.Second)
	tr.SetSlice("ns/web-1", slice("web-1", "web", "10.0.0.1"), before)
	tr.SetSlice("ns/web-2", slice("web-2", "web", "10.0.0.2"), after)
	c := tr.Take()
	if diff := cmp.Diff([]time.Time{after}, c.Triggers); diff != "" {
		t.Errorf("Triggers (-want +got), changes from before the start left out:\n%s", diff)
	}
	tr.Restore(c) // the sync failed
	tr.SetService("ns/api", svc("api", 443))
	if s, e := tr.Pending(); s != 1 || e != 1 {
		t.Errorf("Pending() after Restore = %d, %d, want 1, 1", s, e)
	}
	c = tr.Take()
	if diff := cmp.Diff([]string{"ns/api", "ns/web"}, keys(c.Changed)); diff != "" {
		t.Errorf("Changed after Restore (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Time{after}, c.Triggers); diff != "" {
		t.Errorf("Triggers after Restore (-want +got):\n%s", diff)
	}
}

// An update of a slice counts its trigger time once (one network
// programming latency per change, as kube-proxy observes); a slice that
// moves to another Service counts it for both.
func TestTriggerOncePerService(t *testing.T) {
	tr := New(t0)
	at := t0.Add(time.Second)
	tr.SetSlice("ns/web-1", slice("web-1", "web", "10.0.0.1"), at)
	tr.Take()
	tr.SetSlice("ns/web-1", slice("web-1", "web", "10.0.0.2"), at.Add(time.Second))
	if c := tr.Take(); len(c.Triggers) != 1 {
		t.Errorf("update: Triggers = %v, want one", c.Triggers)
	}
	tr.SetSlice("ns/web-1", slice("web-1", "api", "10.0.0.2"), at.Add(2*time.Second))
	if c := tr.Take(); len(c.Triggers) != 2 || len(c.Changed) != 2 {
		t.Errorf("move to another Service: Triggers = %v, Changed = %v, want two each", c.Triggers, c.Changed)
	}
}
