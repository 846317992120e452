package kernel

import (
	"net/netip"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// mapDataType is what a map's elements map to: a verdict, or the
// (possibly concatenated) value types of a data map.
func mapDataType(s *nft.Set) nftables.SetDatatype {
	if len(s.Data) == 0 {
		return nftables.TypeVerdict
	}
	types := make([]nftables.SetDatatype, len(s.Data))
	for i, d := range s.Data {
		types[i] = setDataTypes[d]
	}
	if len(types) == 1 {
		return types[0]
	}
	t, _ := nftables.ConcatSetType(types...) // at most 2 parts
	return t
}

// encodeKeyEnd is the last key of an interval element: every prefix part at
// its last address. A concatenated interval set (the kernel's pipapo) takes
// each element as its first and last key.
func encodeKeyEnd(types []nft.DataType, key []nft.Value) []byte {
	end := make([]nft.Value, len(key))
	for i, v := range key {
		end[i] = v
		if v.Prefix.IsValid() {
			end[i] = nft.Value{Addr: lastAddr(v.Prefix)}
		}
	}
	return encodeKey(types, end)
}

// addrKeyBytes is an address key part: a prefix part starts at its first
// address.
func addrKeyBytes(v nft.Value) []byte {
	if v.Prefix.IsValid() {
		return v.Prefix.Masked().Addr().AsSlice()
	}
	return v.Addr.AsSlice()
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := range b {
		host := p.Bits() - i*8
		switch {
		case host <= 0:
			b[i] = 0xff
		case host < 8:
			b[i] |= 0xff >> host
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
