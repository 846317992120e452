package kernel

import (
	"math/bits"
	"net/netip"
	"strings"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// decodeSet reads a set's definition: key and data types, flags, size.
func decodeSet(ks *nftables.Set) *nft.Set {
	s := &nft.Set{Name: ks.Name, Map: ks.IsMap, Comment: ks.Comment, Interval: ks.Interval,
		Dynamic: ks.Dynamic, Size: ks.Size}
	s.Key = typeNames(ks.KeyType.Name)
	if ks.IsMap && ks.DataType.Name != nftables.TypeVerdict.Name {
		s.Data = typeNames(ks.DataType.Name)
	}
	return s
}

func typeNames(name string) []nft.DataType {
	var out []nft.DataType
	for _, n := range strings.Split(name, " . ") {
		out = append(out, nft.DataType(n))
	}
	return out
}

// toPrefixes turns the address parts of an interval element into prefixes,
// from the element's last key: a range that is not a prefix decodes to an
// invalid one, which matches nothing we want.
func toPrefixes(s *nft.Set, key []nft.Value, keyEnd []byte) []nft.Value {
	end := decodeElement(&nft.Set{Key: s.Key}, nftables.SetElement{Key: keyEnd}).Key
	out := make([]nft.Value, len(key))
	for i, v := range key {
		out[i] = v
		if v.Addr.IsValid() && i < len(end) {
			out[i] = nft.Value{Prefix: rangePrefix(v.Addr, end[i].Addr)}
		}
	}
	return out
}

// rangePrefix returns the prefix that spans first to last.
func rangePrefix(first, last netip.Addr) netip.Prefix {
	if !last.IsValid() || first.BitLen() != last.BitLen() {
		return netip.Prefix{}
	}
	a, b := first.AsSlice(), last.AsSlice()
	n := 0
	for i := range a {
		x := a[i] ^ b[i]
		if x == 0 {
			n += 8
			continue
		}
		n += bits.LeadingZeros8(x)
		break
	}
	p := netip.PrefixFrom(first, n)
	if p.Masked().Addr() != first || lastAddr(p) != last {
		return netip.Prefix{}
	}
	return p
}
