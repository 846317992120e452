package trace_test

import (
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

var (
	externalIP = addr("198.51.100.20")
	lbIP       = addr("198.51.100.30")
)

// lbSnapshot is Service web as a LoadBalancer: ClusterIP, NodePort 30080,
// an externalIP and an ingress IP, all on port 80 -> 8080, with the given
// endpoints (none ready when eps is empty).
func lbSnapshot(eps []netip.Addr) *model.Snapshot {
	svc := service("web", []netip.Addr{webIP}, model.ServicePort{Name: "http", Protocol: model.TCP, Port: 80, NodePort: 30080})
	svc.Type = model.LoadBalancer
	svc.ExternalIPs = []netip.Addr{externalIP}
	svc.LoadBalancerIPs = []netip.Addr{lbIP}
	ports := []model.EndpointPort{epPort("http", model.TCP, 8080)}
	return &model.Snapshot{
		Services: []model.Service{svc},
		Slices:   []model.EndpointSlice{slice("web", "web-1", ports, eps, addrs("10.0.7.7")...)},
	}
}

func TestExternalTraffic(t *testing.T) {
	table := compileTable(t, lbSnapshot(webEPs), options(), nft.IPv4)
	for _, tc := range []struct {
		name  string
		saddr netip.Addr
		daddr netip.Addr
		dport uint16
		from  string
		want  map[string]string
	}{
		{"NodePort on the node IP from the network", remoteIP, nodeIP, 30080, "network", spread(webEPs, 8080, true)},
		{"NodePort on the node IP from a pod", clientIP, nodeIP, 30080, "network", spread(webEPs, 8080, true)},
		{"NodePort on the node IP from the host", nodeIP, nodeIP, 30080, "host", spread(webEPs, 8080, true)},
		{"NodePort on 127.0.0.1 from the host is not DNATed", nodeIP, addr("127.0.0.1"), 30080, "host",
			accepted(addr("127.0.0.1"), 30080, false)},
		{"NodePort on another address is not DNATed", remoteIP, addr("192.168.0.99"), 30080, "network",
			accepted(addr("192.168.0.99"), 30080, false)},
		{"LoadBalancer ingress IP", remoteIP, lbIP, 80, "network", spread(webEPs, 8080, true)},
		{"LoadBalancer ingress IP from a pod", clientIP, lbIP, 80, "network", spread(webEPs, 8080, true)},
		{"externalIP", remoteIP, externalIP, 80, "network", spread(webEPs, 8080, true)},
		{"externalIP from the host", nodeIP, externalIP, 80, "host", spread(webEPs, 8080, true)},
		{"externalIP on a port the Service does not have", remoteIP, externalIP, 81, "network",
			accepted(externalIP, 81, false)},
		{"ClusterIP on a port the Service does not have", clientIP, webIP, 81, "network", rejected(webIP, 81)},
		{"ClusterIP with a protocol the Service does not have", clientIP, webIP, 80, "udp", rejected(webIP, 80)},
		{"ClusterIP on a wrong port from the host", nodeIP, webIP, 81, "host", rejected(webIP, 81)},
		{"unrelated address", clientIP, addr("10.0.5.5"), 80, "network", accepted(addr("10.0.5.5"), 80, false)},
		{"unrelated address from the host", nodeIP, addr("10.0.5.5"), 80, "host", accepted(addr("10.0.5.5"), 80, false)},
		{"the node's own port", remoteIP, nodeIP, 22, "network", accepted(nodeIP, 22, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, proto := fromNetwork, nft.ProtoTCP
			switch tc.from {
			case "host":
				o = fromHost
			case "udp":
				proto = nft.ProtoUDP
			}
			checkSummary(t, table, packet(tc.saddr, tc.daddr, proto, tc.dport), o, tc.want)
		})
	}
}

// TestNoEndpoints: a Service whose endpoints are all not ready rejects new
// connections on every address, so that clients fail at once.
func TestNoEndpoints(t *testing.T) {
	table := compileTable(t, lbSnapshot(nil), options(), nft.IPv4)
	for _, tc := range []struct {
		name  string
		saddr netip.Addr
		daddr netip.Addr
		dport uint16
		host  bool
	}{
		{"ClusterIP from a pod", clientIP, webIP, 80, false},
		{"ClusterIP from the host", nodeIP, webIP, 80, true},
		{"NodePort from the network", remoteIP, nodeIP, 30080, false},
		{"NodePort from the host", nodeIP, nodeIP, 30080, true},
		{"externalIP", remoteIP, externalIP, 80, false},
		{"LoadBalancer ingress IP", remoteIP, lbIP, 80, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := fromNetwork
			if tc.host {
				o = fromHost
			}
			checkSummary(t, table, packet(tc.saddr, tc.daddr, nft.ProtoTCP, tc.dport), o, rejected(tc.daddr, tc.dport))
		})
	}
}

func TestIPv6(t *testing.T) {
	clusterIP6, lbIP6 := addr("fd00:96::10"), addr("2001:db8:2::30")
	eps6 := addrs("fd00:10::1:1", "fd00:10::2:1", "fd00:10::3:1")
	snap := lbSnapshot(webEPs)
	snap.Services[0].ClusterIPs = []netip.Addr{webIP, clusterIP6}
	snap.Services[0].LoadBalancerIPs = append(snap.Services[0].LoadBalancerIPs, lbIP6)
	snap.Slices = append(snap.Slices, slice("web", "web-v6", []model.EndpointPort{epPort("http", model.TCP, 8080)}, eps6))
	snap.Services = append(snap.Services, service("empty", addrs("10.96.0.11", "fd00:96::11"), port("http", model.UDP, 53)))
	table := compileTable(t, snap, options(), nft.IPv6)
	for _, tc := range []struct {
		name  string
		saddr netip.Addr
		daddr netip.Addr
		proto uint8
		dport uint16
		want  map[string]string
	}{
		{"ClusterIP from a pod", addr("fd00:10::9:9"), clusterIP6, nft.ProtoTCP, 80, spread(eps6, 8080, false)},
		{"ClusterIP from outside the cluster", remote6, clusterIP6, nft.ProtoTCP, 80, spread(eps6, 8080, true)},
		{"hairpin", eps6[1], clusterIP6, nft.ProtoTCP, 80, map[string]string{
			"accept [fd00:10::1:1]:8080": "1/3", "accept [fd00:10::2:1]:8080 masquerade": "1/3", "accept [fd00:10::3:1]:8080": "1/3"}},
		{"NodePort on the node IP", remote6, nodeIP6, nft.ProtoTCP, 30080, spread(eps6, 8080, true)},
		{"LoadBalancer ingress IP", remote6, lbIP6, nft.ProtoTCP, 80, spread(eps6, 8080, true)},
		{"ClusterIP on a wrong port", addr("fd00:10::9:9"), clusterIP6, nft.ProtoTCP, 81, rejected(clusterIP6, 81)},
		{"no endpoints", addr("fd00:10::9:9"), addr("fd00:96::11"), nft.ProtoUDP, 53, rejected(addr("fd00:96::11"), 53)},
		{"unrelated address", addr("fd00:10::9:9"), addr("fd00:10::5:5"), nft.ProtoTCP, 80,
			accepted(addr("fd00:10::5:5"), 80, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSummary(t, table, packet(tc.saddr, tc.daddr, tc.proto, tc.dport), fromNetwork, tc.want)
		})
	}
}
