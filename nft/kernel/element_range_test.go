package kernel

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// rangeText renders raw rbtree elements as nft --debug=netlink lists them:
// the key's bytes, and "end" for an interval end.
func rangeText(raw []nftables.SetElement) string {
	var parts []string
	for _, e := range raw {
		s := fmt.Sprintf("%x", e.Key)
		if e.IntervalEnd {
			s += " end"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// TestRangeEncoding: a one-part interval set's element is a start and, at
// the address after its last, an end: what nft 1.0.6 sends for the same
// elements (`nft --debug=netlink add element`), without its leading end at
// zero. A range that runs to the last address has no end.
func TestRangeEncoding(t *testing.T) {
	tests := []struct {
		prefixes []string
		want     string
	}{
		{[]string{"10.96.0.0/16"}, "0a600000, 0a610000 end"},
		{[]string{"10.96.0.0/16", "10.97.0.0/16"}, "0a600000, 0a610000 end, 0a610000, 0a620000 end"},
		{[]string{"255.255.255.0/24"}, "ffffff00"},
		{[]string{"fd00:96::/108"}, "fd000096000000000000000000000000, fd000096000000000000000000100000 end"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.prefixes, ","), func(t *testing.T) {
			if got := rangeText(encodeRanges(prefixElements(tc.prefixes...))); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestRangeRoundTrip encodes range elements as an add message does and
// decodes them as a dump of the set is decoded, in the dump's (reverse)
// order, with nft's leading end at zero when nft wrote the set.
func TestRangeRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		prefixes []string
		nftZero  bool
	}{
		{"one ipv4", []string{"10.96.0.0/12"}, false},
		{"adjacent and apart", []string{"10.96.0.0/16", "10.97.0.0/16", "192.168.0.0/24"}, true},
		{"a single address, the last one", []string{"10.0.0.1/32", "255.255.255.255/32"}, false},
		{"ipv6", []string{"fd00:96::/108", "fd00:97::/112"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := &nft.Set{Name: "s", Interval: true, Key: []nft.DataType{nft.AddrType(family(tc.prefixes[0]))}}
			want := prefixElements(tc.prefixes...)
			msgs := marshal(t, func(c *nftables.Conn) error {
				return c.SetAddElements(newSet(tableOf(family(tc.prefixes[0])), set), encodeElements(set, want))
			})
			var raw []nftables.SetElement
			for _, m := range msgs {
				elems, err := appendElements(nil, m.Data)
				if err != nil {
					t.Fatal(err)
				}
				raw = append(raw, elems...)
			}
			if tc.nftZero {
				zero := make([]byte, len(raw[0].Key))
				raw = append(raw, nftables.SetElement{Key: zero, IntervalEnd: true})
			}
			for i, j := 0, len(raw)-1; i < j; i, j = i+1, j-1 {
				raw[i], raw[j] = raw[j], raw[i]
			}
			got, ok := decodeRanges(raw)
			if !ok {
				t.Fatalf("decodeRanges(%s) reports a range that is no prefix", rangeText(raw))
			}
			if diff := cmp.Diff(elementTexts(set, want), elementTexts(set, got)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRangeNotPrefix: a range nftproxy would not write (10.0.0.0 to
// 10.0.0.2) is reported, so that Read marks the set as not ours.
func TestRangeNotPrefix(t *testing.T) {
	raw := []nftables.SetElement{{Key: []byte{10, 0, 0, 0}}, {Key: []byte{10, 0, 0, 3}, IntervalEnd: true}}
	if _, ok := decodeRanges(raw); ok {
		t.Error("10.0.0.0-10.0.0.2 decoded as a prefix")
	}
}

func elementTexts(s *nft.Set, elems []nft.Element) []string {
	var out []string
	for _, e := range elems {
		out = append(out, s.ElementText(e))
	}
	return out
}

func prefixElements(prefixes ...string) []nft.Element {
	var out []nft.Element
	for _, p := range prefixes {
		out = append(out, nft.Element{Key: []nft.Value{{Prefix: netip.MustParsePrefix(p)}}})
	}
	return out
}

func family(prefix string) nft.Family { return nft.FamilyOf(netip.MustParsePrefix(prefix).Addr()) }
