package tracker

import (
	"fmt"
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
	if diff := cmp.Diff([]Trigger{{after, model.IPv4}}, c.Triggers); diff != "" {
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
	if diff := cmp.Diff([]Trigger{{after, model.IPv4}}, c.Triggers); diff != "" {
		t.Errorf("Triggers after Restore (-want +got):\n%s", diff)
	}
}

// TestServiceCIDRs: ServiceCIDRs are in every snapshot, sorted by name; a
// change reports true and changes no Service, the same value again false.
func TestServiceCIDRs(t *testing.T) {
	tr := New(t0)
	sc := func(name, cidr string) *model.ServiceCIDR {
		return &model.ServiceCIDR{Name: name, CIDRs: []netip.Prefix{netip.MustParsePrefix(cidr)}}
	}
	steps := []struct {
		key     string
		sc      *model.ServiceCIDR
		changed bool
	}{
		{"kubernetes", sc("kubernetes", "10.96.0.0/16"), true},
		{"extra", sc("extra", "10.97.0.0/16"), true},
		{"kubernetes", sc("kubernetes", "10.96.0.0/16"), false},
		{"gone", nil, false},
	}
	for _, st := range steps {
		if got := tr.SetServiceCIDR(st.key, st.sc); got != st.changed {
			t.Errorf("SetServiceCIDR(%s) = %v, want %v", st.key, got, st.changed)
		}
	}
	c := tr.Take()
	var names []string
	for _, s := range c.Snapshot.ServiceCIDRs {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"extra", "kubernetes"}, names); diff != "" || len(c.Changed) != 0 {
		t.Errorf("ServiceCIDRs (-want +got):\n%s\nChanged: %v", diff, c.Changed)
	}
	if !tr.SetServiceCIDR("extra", nil) || len(tr.Take().Snapshot.ServiceCIDRs) != 1 {
		t.Error("deleting extra did not take it out")
	}
}

// TestOneTriggerPerChange: each change of a slice that carries a trigger
// time is one network programming latency, as kube-proxy counts them: 20
// updates give 20 (the old and the new version of an update once counted
// twice), a slice moved to another Service one, a deletion none; with the
// slice's family.
func TestOneTriggerPerChange(t *testing.T) {
	tr := New(t0)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	tr.SetSlice("ns/web-1", slice("web-1", "web", "10.0.0.1"), at(1))
	tr.Take()
	for i := range 20 {
		tr.SetSlice("ns/web-1", slice("web-1", "web", fmt.Sprintf("10.0.1.%d", i)), at(2+i))
	}
	if c := tr.Take(); len(c.Triggers) != 20 {
		t.Errorf("20 updates: %d triggers, want 20", len(c.Triggers))
	}
	tr.SetSlice("ns/web-1", slice("web-1", "api", "10.0.0.9"), at(30))
	if c := tr.Take(); len(c.Triggers) != 1 || len(c.Changed) != 2 {
		t.Errorf("moved to another Service: triggers %v, changed %v; want 1 trigger, 2 Services", c.Triggers, keys(c.Changed))
	}
	tr.SetSlice("ns/web-1", nil, at(31))
	if c := tr.Take(); len(c.Triggers) != 0 || len(c.Changed) != 1 {
		t.Errorf("deleted: triggers %v, changed %v; want none, 1 Service", c.Triggers, keys(c.Changed))
	}
	v6 := slice("web-6", "web", "10.0.0.1")
	v6.AddressType, v6.Endpoints[0].Addresses[0] = model.IPv6, netip.MustParseAddr("fd00::1")
	tr.SetSlice("ns/web-6", v6, at(32))
	if c := tr.Take(); len(c.Triggers) != 1 || c.Triggers[0].Family != model.IPv6 {
		t.Errorf("IPv6 slice: triggers %v, want one of family IPv6", c.Triggers)
	}
}
