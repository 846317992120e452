package trace_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

var (
	webIP  = addr("10.96.0.10")
	webEPs = addrs("10.0.1.1", "10.0.2.1", "10.0.3.1")
)

// webSnapshot is Service web with one port of proto, 80 -> 8080, and
// three ready endpoints.
func webSnapshot(proto model.Protocol) *model.Snapshot {
	return &model.Snapshot{
		Services: []model.Service{service("web", []netip.Addr{webIP}, port("http", proto, 80))},
		Slices:   []model.EndpointSlice{slice("web", "web-1", []model.EndpointPort{epPort("http", proto, 8080)}, webEPs)},
	}
}

func TestClusterIPProtocols(t *testing.T) {
	for _, tc := range []struct {
		proto model.Protocol
		num   uint8
	}{{model.TCP, nft.ProtoTCP}, {model.UDP, nft.ProtoUDP}, {model.SCTP, nft.ProtoSCTP}} {
		t.Run(string(tc.proto), func(t *testing.T) {
			table := compileTable(t, webSnapshot(tc.proto), options(), nft.IPv4)
			checkSummary(t, table, packet(clientIP, webIP, tc.num, 80), fromNetwork, spread(webEPs, 8080, false))
		})
	}
}

func TestClusterIPMultiPort(t *testing.T) {
	snap := &model.Snapshot{
		Services: []model.Service{service("dns", []netip.Addr{webIP},
			port("https", model.TCP, 443), port("http", model.TCP, 80),
			port("dns-udp", model.UDP, 53), port("dns-tcp", model.TCP, 53))},
		Slices: []model.EndpointSlice{slice("dns", "dns-1", []model.EndpointPort{
			epPort("http", model.TCP, 8080), epPort("https", model.TCP, 8443),
			epPort("dns-udp", model.UDP, 5353), epPort("dns-tcp", model.TCP, 5354)}, webEPs)},
	}
	table := compileTable(t, snap, options(), nft.IPv4)
	for _, tc := range []struct {
		proto  uint8
		port   uint16
		target uint16
	}{
		{nft.ProtoTCP, 80, 8080},
		{nft.ProtoTCP, 443, 8443},
		{nft.ProtoUDP, 53, 5353},
		{nft.ProtoTCP, 53, 5354},
	} {
		t.Run(fmt.Sprintf("%d/%d", tc.proto, tc.port), func(t *testing.T) {
			checkSummary(t, table, packet(clientIP, webIP, tc.proto, tc.port), fromNetwork, spread(webEPs, tc.target, false))
		})
	}
}

func TestClusterIPEndpoints(t *testing.T) {
	http := []model.EndpointPort{epPort("http", model.TCP, 8080)}
	for _, tc := range []struct {
		name   string
		slices []model.EndpointSlice
		want   map[string]string
	}{{
		name: "several slices combined",
		slices: []model.EndpointSlice{
			slice("web", "web-1", http, webEPs[:2]),
			slice("web", "web-2", http, webEPs[2:]),
		},
		want: spread(webEPs, 8080, false),
	}, {
		name: "an endpoint in two slices counts once",
		slices: []model.EndpointSlice{
			slice("web", "web-1", http, webEPs[:2]),
			slice("web", "web-2", http, webEPs[1:]),
		},
		want: spread(webEPs, 8080, false),
	}, {
		name:   "not ready endpoints are never chosen",
		slices: []model.EndpointSlice{slice("web", "web-1", http, webEPs, addrs("10.0.4.1", "10.0.5.1")...)},
		want:   spread(webEPs, 8080, false),
	}, {
		name: "named target port resolved per slice",
		slices: []model.EndpointSlice{
			slice("web", "web-1", []model.EndpointPort{epPort("metrics", model.TCP, 9100), epPort("http", model.TCP, 8080)}, webEPs[:1]),
			slice("web", "web-2", []model.EndpointPort{epPort("http", model.TCP, 9080)}, webEPs[1:2]),
			slice("web", "web-3", []model.EndpointPort{epPort("metrics", model.TCP, 9100)}, webEPs[2:]),
		},
		want: map[string]string{"accept 10.0.1.1:8080": "1/2", "accept 10.0.2.1:9080": "1/2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &model.Snapshot{
				Services: []model.Service{service("web", []netip.Addr{webIP}, port("http", model.TCP, 80))},
				Slices:   tc.slices,
			}
			table := compileTable(t, snap, options(), nft.IPv4)
			checkSummary(t, table, packet(clientIP, webIP, nft.ProtoTCP, 80), fromNetwork, tc.want)
		})
	}
}

// manyEndpoints returns n pod addresses 10.0.x.y.
func manyEndpoints(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{10, 0, byte(1 + i/200), byte(1 + i%200)})
	}
	return out
}

// TestClusterIPUniform covers flat chains and the bucketed chains the
// compiler makes past 32 endpoints.
func TestClusterIPUniform(t *testing.T) {
	for _, n := range []int{1, 2, 3, 31, 32, 33, 100, 257} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			eps := manyEndpoints(n)
			snap := &model.Snapshot{
				Services: []model.Service{service("web", []netip.Addr{webIP}, port("http", model.TCP, 80))},
				Slices:   []model.EndpointSlice{slice("web", "web-1", []model.EndpointPort{epPort("http", model.TCP, 8080)}, eps)},
			}
			table := compileTable(t, snap, options(), nft.IPv4)
			checkSummary(t, table, packet(clientIP, webIP, nft.ProtoTCP, 80), fromNetwork, spread(eps, 8080, false))
		})
	}
}

func TestClusterIPMasquerade(t *testing.T) {
	masqAll := options()
	masqAll.MasqueradeAll = true
	noCIDRs := compile.DefaultOptions()
	for _, tc := range []struct {
		name  string
		opts  compile.Options
		saddr netip.Addr
		from  string
		masq  bool
	}{
		{"pod inside LocalCIDRs", options(), clientIP, "network", false},
		{"client outside the cluster", options(), remoteIP, "network", true},
		{"process on the node", options(), nodeIP, "host", true},
		{"MasqueradeAll, pod", masqAll, clientIP, "network", true},
		{"MasqueradeAll, process on the node", masqAll, nodeIP, "host", true},
		{"no LocalCIDRs, outside client", noCIDRs, remoteIP, "network", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := compileTable(t, webSnapshot(model.TCP), tc.opts, nft.IPv4)
			o := fromNetwork
			if tc.from == "host" {
				o = fromHost
			}
			checkSummary(t, table, packet(tc.saddr, webIP, nft.ProtoTCP, 80), o, spread(webEPs, 8080, tc.masq))
		})
	}
}

// TestHairpin: a pod that reaches its own Service and is chosen as the
// endpoint must be masqueraded, or it would answer itself from its own
// address and drop the reply; the other endpoints see it unchanged.
func TestHairpin(t *testing.T) {
	table := compileTable(t, webSnapshot(model.TCP), options(), nft.IPv4)
	want := map[string]string{
		"accept 10.0.1.1:8080 masquerade": "1/3",
		"accept 10.0.2.1:8080":            "1/3",
		"accept 10.0.3.1:8080":            "1/3",
	}
	checkSummary(t, table, packet(webEPs[0], webIP, nft.ProtoTCP, 80), fromNetwork, want)
}
