package trace_test

import (
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestServiceCIDRs: with ServiceCIDRs of both families, a new connection
// to an address inside one that no Service holds is dropped, from a pod and
// from the host; an allocated ClusterIP on a port its Service lacks is
// still rejected; addresses outside every ServiceCIDR are untouched.
func TestServiceCIDRs(t *testing.T) {
	clusterIP6 := addr("fd00:96::10")
	snap := &model.Snapshot{
		Services: []model.Service{
			service("web", []netip.Addr{webIP}, port("http", model.TCP, 80)),
			service("web6", []netip.Addr{clusterIP6}, port("http", model.TCP, 80)),
		},
		Slices: []model.EndpointSlice{
			slice("web", "web-1", []model.EndpointPort{epPort("http", model.TCP, 8080)}, webEPs),
			slice("web6", "web6-1", []model.EndpointPort{epPort("http", model.TCP, 8080)}, addrs("fd00:10::1")),
		},
		ServiceCIDRs: []model.ServiceCIDR{
			{Name: "kubernetes", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:96::/112")}},
			{Name: "extra", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.100.0.0/24")}},
		},
	}
	tables := map[nft.Family]*nft.Table{
		nft.IPv4: compileTable(t, snap, options(), nft.IPv4),
		nft.IPv6: compileTable(t, snap, options(), nft.IPv6),
	}
	for _, tc := range []struct {
		name         string
		saddr, daddr netip.Addr
		dport        uint16
		from         trace.Options
		want         map[string]string
	}{
		{"allocated ClusterIP", clientIP, webIP, 80, fromNetwork, spread(webEPs, 8080, false)},
		{"allocated ClusterIP on a port the Service lacks", clientIP, webIP, 81, fromNetwork, rejected(webIP, 81)},
		{"unallocated, first ServiceCIDR", clientIP, addr("10.96.0.200"), 80, fromNetwork, dropped(addr("10.96.0.200"), 80)},
		{"unallocated, second ServiceCIDR", clientIP, addr("10.100.0.7"), 443, fromNetwork, dropped(addr("10.100.0.7"), 443)},
		{"unallocated, from the host", nodeIP, addr("10.96.255.255"), 80, fromHost, dropped(addr("10.96.255.255"), 80)},
		{"just outside every ServiceCIDR", clientIP, addr("10.97.0.0"), 80, fromNetwork, accepted(addr("10.97.0.0"), 80, false)},
		{"outside, from the host", nodeIP, addr("10.100.1.1"), 80, fromHost, accepted(addr("10.100.1.1"), 80, false)},
		{"allocated IPv6 ClusterIP", addr("fd00:10::9"), clusterIP6, 80, fromNetwork, accepted(addr("fd00:10::1"), 8080, false)},
		{"unallocated IPv6", addr("fd00:10::9"), addr("fd00:96::ffff"), 80, fromNetwork, dropped(addr("fd00:96::ffff"), 80)},
		{"IPv6 outside", addr("fd00:10::9"), addr("fd00:96::1:0"), 80, fromNetwork, accepted(addr("fd00:96::1:0"), 80, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := tables[nft.FamilyOf(tc.daddr)]
			checkSummary(t, table, packet(tc.saddr, tc.daddr, nft.ProtoTCP, tc.dport), tc.from, tc.want)
		})
	}
}
