package nft

import (
	"net/netip"
	"slices"
	"sort"
)

// Set is a named set, or a verdict map when Map is true.
type Set struct {
	Name     string
	Key      []DataType
	Map      bool
	Comment  string
	Elements []Element
	// Data are the value types of a data map (Map true): nil for a verdict
	// map.
	Data []DataType
	// Interval lets key parts be prefixes (flags interval).
	Interval bool
	// Dynamic sets are filled from the packet path (flags dynamic,timeout):
	// their elements belong to the kernel, never to a plan.
	Dynamic bool
	// Size bounds the number of elements; 0 is the kernel's default.
	Size uint32
	// Typeof declares the key by the expressions that build it (`typeof
	// ip daddr . numgen random mod 1`) rather than by type. nft needs it
	// for a key with a numgen part: that part's type, integer, has no size
	// of its own, which a `type` line cannot express. Key still lists the
	// types of the parts.
	Typeof []Field
	// DataTypeof declares a data map's value the same way, when Typeof is
	// set: nft requires both or neither.
	DataTypeof []Field
}

// Value is one part of an element key: Addr for address types, Num for
// protocol numbers, ports and integers (numgen parts).
type Value struct {
	Addr netip.Addr
	Num  uint32
	// Prefix is an address range, in interval sets; it is used instead of
	// Addr when valid.
	Prefix netip.Prefix
}

// Element is a set element, or a map element with its verdict.
type Element struct {
	Key     []Value
	Verdict Verdict
	// Data is a data map element's value.
	Data []Value
	// Comment is kept by the kernel with the element (its userdata) and
	// listed by nft: the entries of the Service maps name the Service port
	// they belong to ("demo/web:http"), which no chain name does.
	Comment string
}

// sameSetDef reports whether a and b are the same set definition: what the
// kernel cannot change without deleting the set.
func sameSetDef(a, b *Set) bool {
	return a.Map == b.Map && a.Comment == b.Comment && a.Interval == b.Interval && a.Dynamic == b.Dynamic &&
		a.Size == b.Size && slices.Equal(a.Key, b.Key) && slices.Equal(a.Data, b.Data) &&
		slices.Equal(a.Typeof, b.Typeof) && slices.Equal(a.DataTypeof, b.DataTypeof)
}

// definition returns a copy of s without its elements.
func (s *Set) definition() *Set {
	d := *s
	d.Elements = nil
	return &d
}

// SortElements sorts s's elements by their text so that output and plans
// are deterministic; a one-part interval set's by address, as nft lists
// them.
func (s *Set) SortElements() {
	if s.Interval && len(s.Key) == 1 {
		slices.SortFunc(s.Elements, func(a, b Element) int {
			return a.Key[0].Prefix.Addr().Compare(b.Key[0].Prefix.Addr())
		})
		return
	}
	keys := make([]string, len(s.Elements))
	for i, e := range s.Elements {
		keys[i] = s.ElementText(e)
	}
	sort.Sort(byText{keys, s.Elements})
}

type byText struct {
	keys  []string
	elems []Element
}

func (b byText) Len() int           { return len(b.keys) }
func (b byText) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byText) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.elems[i], b.elems[j] = b.elems[j], b.elems[i]
}
