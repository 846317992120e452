package kernel

import (
	"net/netip"
	"slices"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// Interval sets with a one-part key (service-cidrs) are the kernel's
// rbtree: an element is two, its first address and, flagged interval-end,
// the address after its last; the kernel refuses NFTA_SET_ELEM_KEY_END
// outside concatenations (nft_setelem_valid_key_end, kernel 6.x). Only
// concatenated interval sets (firewall-allow) take an element with its
// first and last key, as encodeElements writes them.
//
// nft 1.0.6 also adds an interval-end element at address zero when no
// range starts there; the kernel does not need it and we do not write it,
// and decodeRanges ignores it when nft -f wrote the set.

// isRangeSet reports whether s is an interval set of the rbtree kind.
func isRangeSet(s *nft.Set) bool { return s.Interval && len(s.Key) == 1 }

// encodeRanges returns each prefix element as its start and its end. A
// prefix that runs to the last address has no end: the range stays open.
func encodeRanges(elems []nft.Element) []nftables.SetElement {
	out := make([]nftables.SetElement, 0, 2*len(elems))
	for _, e := range elems {
		p := e.Key[0].Prefix
		if !p.IsValid() { // an address alone is a range of one
			p = netip.PrefixFrom(e.Key[0].Addr, e.Key[0].Addr.BitLen())
		}
		out = append(out, nftables.SetElement{Key: p.Masked().Addr().AsSlice()})
		if end := lastAddr(p).Next(); end.IsValid() {
			out = append(out, nftables.SetElement{Key: end.AsSlice(), IntervalEnd: true})
		}
	}
	return out
}

// decodeRanges pairs the starts and ends a dump of a range set returns (in
// any order) into prefix elements. It reports false when the set holds a
// range that is not one prefix, which nftproxy never writes.
func decodeRanges(raw []nftables.SetElement) ([]nft.Element, bool) {
	type bound struct {
		addr netip.Addr
		end  bool
	}
	bounds := make([]bound, 0, len(raw))
	for _, e := range raw {
		if a, ok := netip.AddrFromSlice(e.Key); ok {
			bounds = append(bounds, bound{a, e.IntervalEnd})
		}
	}
	// By address; at one address an end goes first: it closes the range
	// before, and the next range starts there.
	slices.SortFunc(bounds, func(a, b bound) int {
		if c := a.addr.Compare(b.addr); c != 0 {
			return c
		}
		if a.end == b.end {
			return 0
		}
		if a.end {
			return -1
		}
		return 1
	})
	var out []nft.Element
	var start netip.Addr
	ok := true
	add := func(last netip.Addr) {
		p := rangePrefix(start, last)
		ok = ok && p.IsValid()
		out = append(out, nft.Element{Key: []nft.Value{{Prefix: p}}})
		start = netip.Addr{}
	}
	for _, b := range bounds {
		switch {
		case b.end && start.IsValid():
			add(b.addr.Prev())
		case b.end: // nft's leading end at zero: nothing is open
		case start.IsValid():
			ok = false // two starts in a row
			start = b.addr
		default:
			start = b.addr
		}
	}
	if start.IsValid() {
		add(lastAddr(netip.PrefixFrom(start, 0)))
	}
	return out, ok
}
