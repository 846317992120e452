package nft

import (
	"net/netip"
	"testing"
)

// TestElementTextEdgeCases pins the text of the values the differ keys
// elements by, where the append-based rendering could drift from what nft
// prints: prefixes (masked, one address), the zero address, an unknown
// protocol, a comment that needs quoting, data and verdicts.
func TestElementTextEdgeCases(t *testing.T) {
	svc := &Set{Map: true, Key: []DataType{TypeIPv4Addr, TypeInetProto, TypeInetService}}
	data := &Set{Map: true, Key: []DataType{TypeIPv6Addr, TypeInteger}, Data: []DataType{TypeIPv6Addr, TypeInetService}}
	ranges := &Set{Interval: true, Key: []DataType{TypeIPv4Addr}}
	tests := []struct {
		set  *Set
		e    Element
		want string
	}{
		{svc, Element{Key: []Value{{Addr: netip.MustParseAddr("10.96.0.1")}, {Num: uint32(ProtoTCP)}, {Num: 80}},
			Verdict: GotoChain("pick-endpoint"), Comment: `ns/web:"http"`},
			`10.96.0.1 . tcp . 80 comment "ns/web:\"http\"" : goto pick-endpoint`},
		{svc, Element{Key: []Value{{}, {Num: 99}, {Num: 0}}, Verdict: Verdict{Kind: Drop}}, `invalid IP . 99 . 0 : drop`},
		{data, Element{Key: []Value{{Addr: netip.MustParseAddr("fd00::1")}, {Num: 4294967295}},
			Data: []Value{{Addr: netip.MustParseAddr("fd00::2")}, {Num: 8080}}}, `fd00::1 . 4294967295 : fd00::2 . 8080`},
		{ranges, Element{Key: []Value{{Prefix: netip.MustParsePrefix("10.1.2.3/8")}}}, `10.0.0.0/8`},
		{ranges, Element{Key: []Value{{Prefix: netip.MustParsePrefix("10.1.2.3/32")}}}, `10.1.2.3`},
	}
	for _, tc := range tests {
		if got := tc.set.ElementText(tc.e); got != tc.want {
			t.Errorf("ElementText = %q, want %q", got, tc.want)
		}
	}
}
