package kernel

import (
	"encoding/binary"
	"math/bits"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Set and map elements: element_msg.go writes them into the batch, but for
// range sets, which google/nftables writes from encodeElements; encodeKey
// serves requests of one element; decodeElement reads what readElements
// dumps. Every key part fills whole 32-bit words in a concatenation, as the
// kernel's set code expects.

// encodeElements returns elems as google/nftables' elements of s.
func encodeElements(s *nft.Set, elems []nft.Element) []nftables.SetElement {
	if isRangeSet(s) {
		return encodeRanges(elems)
	}
	out := make([]nftables.SetElement, len(elems))
	for i, e := range elems {
		out[i].Key = encodeKey(s.Key, e.Key)
		out[i].Comment = e.Comment // google/nftables writes it as NFTA_SET_ELEM_USERDATA, as nft does
		if s.Interval {
			out[i].KeyEnd = encodeKeyEnd(s.Key, e.Key)
		}
		switch {
		case s.Map && len(s.Data) > 0:
			out[i].Val = encodeKey(s.Data, e.Data)
		case s.Map:
			out[i].VerdictData = encodeVerdict(e.Verdict)
		}
	}
	return out
}

// encodeKey packs an element key: each part padded to whole 32-bit words.
func encodeKey(types []nft.DataType, key []nft.Value) []byte {
	var out []byte
	for i, t := range types {
		var b []byte
		switch t {
		case nft.TypeInetProto:
			b = []byte{byte(key[i].Num)}
		case nft.TypeInetService:
			b = binaryutil.BigEndian.PutUint16(uint16(key[i].Num))
		case nft.TypeInteger:
			b = binaryutil.NativeEndian.PutUint32(key[i].Num) // as numgen draws it
		default:
			b = addrKeyBytes(key[i])
		}
		if len(types) > 1 {
			for len(b)%4 != 0 {
				b = append(b, 0)
			}
		}
		out = append(out, b...)
	}
	return out
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

// keySizes are the unpadded byte lengths of the key types we use.
var keySizes = map[nft.DataType]int{nft.TypeIPv4Addr: 4, nft.TypeIPv6Addr: 16, nft.TypeInetProto: 1, nft.TypeInetService: 2,
	nft.TypeInteger: 4}

// decodeElement reverses encodeKey. A key of a type we do not use decodes
// to zero values, which will not match any desired element.
func decodeElement(s *nft.Set, e nftables.SetElement) nft.Element {
	out := nft.Element{Comment: e.Comment, Key: decodeValues(s.Key, e.Key)}
	switch {
	case s.Map && len(s.Data) > 0:
		out.Data = decodeValues(s.Data, e.Val)
	case s.Map:
		out.Verdict = decodeVerdictData(e.Val)
	}
	if s.Interval {
		out.Key = toPrefixes(s, out.Key, e.KeyEnd)
	}
	return out
}

// decodeValues decodes b as the concatenation of types: each part padded to
// four bytes when there are several. A part b is too short for is left zero.
func decodeValues(types []nft.DataType, b []byte) []nft.Value {
	if len(types) == 0 {
		return nil
	}
	out := make([]nft.Value, len(types))
	for i, t := range types {
		size := keySizes[t]
		if size == 0 || len(b) < size {
			continue
		}
		v := &out[i]
		switch t {
		case nft.TypeInetProto:
			v.Num = uint32(b[0])
		case nft.TypeInetService:
			v.Num = uint32(binaryutil.BigEndian.Uint16(b[:2]))
		case nft.TypeInteger:
			v.Num = binaryutil.NativeEndian.Uint32(b[:4])
		default:
			v.Addr = addrFromSlice(b[:size])
		}
		if len(types) > 1 {
			size = (size + 3) / 4 * 4
		}
		b = b[min(size, len(b)):]
	}
	return out
}

// decodeVerdictData decodes a verdict map element's data. google/nftables
// leaves it as the raw NFTA_DATA_VERDICT attributes: a code and, for jump
// and goto, a chain.
func decodeVerdictData(b []byte) nft.Verdict {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nft.Verdict{Kind: -1}
	}
	ad.ByteOrder = binary.BigEndian
	v := nft.Verdict{Kind: -1}
	for ad.Next() {
		switch ad.Type() {
		case unix.NFTA_VERDICT_CODE:
			if kind, ok := verdictsByKind[expr.VerdictKind(int32(ad.Uint32()))]; ok {
				v.Kind = kind
			}
		case unix.NFTA_VERDICT_CHAIN:
			v.Chain = ad.String()
		}
	}
	return v
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

func addrFromSlice(b []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(b)
	return a
}
