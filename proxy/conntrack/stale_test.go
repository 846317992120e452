package conntrack

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/proxy/model"
)

var (
	clusterIP = netip.MustParseAddr("10.96.0.10")
	lbIP      = netip.MustParseAddr("203.0.113.10")
	ep1       = netip.MustParseAddr("10.244.1.1")
	ep2       = netip.MustParseAddr("10.244.2.1")
)

func dnsSnapshot(proto model.Protocol, eps ...netip.Addr) *model.Snapshot {
	svc := model.Service{Namespace: "kube-system", Name: "dns", Type: model.LoadBalancer,
		ClusterIPs: []netip.Addr{clusterIP}, LoadBalancerIPs: []netip.Addr{lbIP},
		Ports: []model.ServicePort{{Name: "dns", Protocol: proto, Port: 53, NodePort: 30053}}}
	s := model.EndpointSlice{Namespace: "kube-system", Name: "dns-1", Service: "dns", AddressType: model.IPv4,
		Ports: []model.EndpointPort{{Name: "dns", Protocol: proto, Port: 5353}}}
	for _, a := range eps {
		s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true})
	}
	return &model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{s}}
}

func TestStale(t *testing.T) {
	addrs := []netip.Addr{clusterIP, lbIP}
	target := func(ep netip.AddrPort) Target { return Target{Addrs: addrs, Port: 53, NodePort: 30053, Endpoint: ep} }
	tests := []struct {
		name      string
		prev, cur *model.Snapshot
		want      []Target
	}{
		{"first sync", nil, dnsSnapshot(model.UDP, ep1), nil},
		{"no change", dnsSnapshot(model.UDP, ep1), dnsSnapshot(model.UDP, ep1), nil},
		{"endpoint added", dnsSnapshot(model.UDP, ep1), dnsSnapshot(model.UDP, ep1, ep2), nil},
		{"endpoint removed", dnsSnapshot(model.UDP, ep1, ep2), dnsSnapshot(model.UDP, ep2),
			[]Target{target(netip.AddrPortFrom(ep1, 5353))}},
		{"first endpoint", dnsSnapshot(model.UDP), dnsSnapshot(model.UDP, ep1), []Target{target(netip.AddrPort{})}},
		{"Service deleted", dnsSnapshot(model.UDP, ep1), &model.Snapshot{},
			[]Target{target(netip.AddrPortFrom(ep1, 5353))}},
		{"TCP is left alone", dnsSnapshot(model.TCP, ep1, ep2), dnsSnapshot(model.TCP, ep2), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Stale(tc.prev, tc.cur), cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
				cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetMatches(t *testing.T) {
	client := netip.MustParseAddrPort("192.0.2.7:40000")
	dead := netip.AddrPortFrom(ep1, 5353)
	flow := func(proto uint8, dst, replySrc netip.AddrPort) Flow {
		return Flow{Proto: proto, Orig: Tuple{client, dst}, Reply: Tuple{replySrc, client}}
	}
	tg := Target{Addrs: []netip.Addr{clusterIP}, Port: 53, NodePort: 30053, Endpoint: dead}
	any := Target{Addrs: []netip.Addr{clusterIP}, Port: 53}
	tests := []struct {
		name string
		t    Target
		f    Flow
		want bool
	}{
		{"to the dead endpoint", tg, flow(protoUDP, netip.AddrPortFrom(clusterIP, 53), dead), true},
		{"to a live endpoint", tg, flow(protoUDP, netip.AddrPortFrom(clusterIP, 53), netip.AddrPortFrom(ep2, 5353)), false},
		{"NodePort to the dead endpoint", tg, flow(protoUDP, netip.MustParseAddrPort("198.51.100.1:30053"), dead), true},
		{"other port", tg, flow(protoUDP, netip.AddrPortFrom(clusterIP, 54), dead), false},
		{"TCP", tg, flow(6, netip.AddrPortFrom(clusterIP, 53), dead), false},
		{"any destination, not DNATed", any, flow(protoUDP, netip.AddrPortFrom(clusterIP, 53), netip.AddrPortFrom(clusterIP, 53)), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.Matches(tc.f); got != tc.want {
				t.Errorf("Matches = %t, want %t", got, tc.want)
			}
		})
	}
}
