package compile

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
)

func TestPackValuesRoundTrip(t *testing.T) {
	a4, a6 := netip.MustParseAddr("10.96.0.1"), netip.MustParseAddr("fd00::1")
	tests := []struct {
		name string
		vs   []nft.Value
	}{
		{"none", nil},
		{"ipv4 service key", []nft.Value{{Addr: a4}, {Num: uint32(nft.ProtoTCP)}, {Num: 80}}},
		{"ipv6 pair", []nft.Value{{Addr: a6}, {Addr: a6}}},
		{"ipv4-mapped ipv6 stays ipv6", []nft.Value{{Addr: netip.MustParseAddr("::ffff:10.0.0.1")}}},
		{"zero values", []nft.Value{{}, {Num: 0}}},
		{"prefixes", []nft.Value{{Prefix: netip.MustParsePrefix("10.0.0.0/8")}, {Prefix: netip.MustParsePrefix("fd00::/64")}}},
		{"unmasked prefix", []nft.Value{{Prefix: netip.MustParsePrefix("10.1.2.3/8")}}},
		{"every field", []nft.Value{{Addr: a4, Num: 65535, Prefix: netip.MustParsePrefix("fd00::/0")}}},
		{"32-bit number", []nft.Value{{Addr: a4}, {Num: 65536}, {Num: 4294967295}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unpackValues(packValues(tc.vs))
			if diff := cmp.Diff(tc.vs, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
				cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			packed := packValues(tc.vs)
			for range tc.vs {
				packed = skipValue(packed)
			}
			if packed != "" {
				t.Errorf("skipping every value leaves %q", packed)
			}
			key := packKey(nft.MapServiceIPs, tc.vs)
			if diff := cmp.Diff(tc.vs, unpackKey(nft.MapServiceIPs, key), cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
				cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("key round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// Claims of one key space collide across the maps that share it, and only
// there.
func TestClaimKeySpaces(t *testing.T) {
	key := []nft.Value{{Addr: netip.MustParseAddr("10.96.0.1")}, {Num: uint32(nft.ProtoTCP)}, {Num: 80}}
	if claimKey(nft.MapServiceIPs, key) != claimKey(nft.MapNoEndpointServices, key) {
		t.Error("service-ips and no-endpoint-services keys differ; want one key space")
	}
	if claimKey(nft.MapServiceIPs, key) == claimKey(nft.MapServiceNodePorts, key) {
		t.Error("service-ips and service-nodeports keys are equal; want separate key spaces")
	}
}

// nextListLen reads the maps and lengths of packed lists as unpackLists
// does, without unpacking them.
func TestNextListLen(t *testing.T) {
	ep := func(a string, port uint16) endpoint { return endpoint{netip.MustParseAddr(a), port} }
	lists := []endpointList{
		{m: 0, eps: []endpoint{ep("10.0.0.1", 80), ep("10.0.0.2", 0), ep("fd00::1", 65535)}},
		{m: 2},
		{m: 3, eps: []endpoint{ep("fd00::2", 8080)}},
	}
	s := packLists(lists)
	var got [][2]int
	for len(s) > 0 {
		var m, n int
		m, n, s = nextListLen(s)
		got = append(got, [2]int{m, n})
	}
	var want [][2]int
	for _, l := range unpackLists(packLists(lists)) {
		want = append(want, [2]int{l.m, len(l.eps)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lengths (-unpackLists +nextListLen):\n%s", diff)
	}
}
