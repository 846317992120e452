package kernel

import (
	"net/netip"
	"slices"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// A range set (service-cidrs) announces each range as two elements, its
// start and its end, in messages of their own. The subscription gathers
// them over the transaction and pairs them when it ends: bounds that pair
// into prefixes exactly are announced as those elements, so a repair
// patches the set. Anything else (bounds that do not pair, or a
// transaction that both adds and deletes ranges of the set, whose order
// pairing would lose) announces the set undecoded, as an element that
// cannot be read is.
type rangeBounds struct {
	f    nft.Family
	set  string
	kind nft.ChangeKind
	raw  []nftables.SetElement
}

func (s *subscription) gatherRange(f nft.Family, kind nft.ChangeKind, set string, elems []nftables.SetElement) {
	for _, r := range s.ranges {
		if r.f == f && r.set == set && r.kind == kind {
			r.raw = append(r.raw, elems...)
			return
		}
	}
	s.ranges = append(s.ranges, &rangeBounds{f: f, set: set, kind: kind, raw: elems})
}

// takeRanges returns the changes of the range sets of the transaction that
// ends, and forgets them.
func (s *subscription) takeRanges() []nft.Change {
	var out []nft.Change
	for _, r := range s.ranges {
		elems, ok := pairBounds(r.raw)
		if !ok || s.bothKinds(r) {
			out = append(out, nft.Change{Kind: r.kind, Family: r.f, Name: r.set})
			continue
		}
		for i := range elems {
			out = append(out, nft.Change{Kind: r.kind, Family: r.f, Name: r.set, Element: &elems[i]})
		}
	}
	s.ranges = nil
	return out
}

func (s *subscription) bothKinds(r *rangeBounds) bool {
	return slices.ContainsFunc(s.ranges, func(o *rangeBounds) bool { return o.f == r.f && o.set == r.set && o.kind != r.kind })
}

// pairBounds returns the prefixes that raw's bounds make, when they make
// exactly those: written back as bounds, the prefixes give raw again (nft's
// lone end at address zero aside). A start or an end alone does not.
func pairBounds(raw []nftables.SetElement) ([]nft.Element, bool) {
	elems, ok := decodeRanges(raw)
	if !ok {
		return nil, false
	}
	got, want := boundsOf(encodeRanges(elems)), boundsOf(raw)
	return elems, slices.Equal(got, want)
}

// boundsOf returns the bounds as sortable strings, without an end at
// address zero.
func boundsOf(raw []nftables.SetElement) []string {
	var out []string
	for _, e := range raw {
		a, ok := netip.AddrFromSlice(e.Key)
		if !ok || (e.IntervalEnd && a.IsUnspecified()) {
			continue
		}
		b := a.String()
		if e.IntervalEnd {
			b += " end"
		}
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}
