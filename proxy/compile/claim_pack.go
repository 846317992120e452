package compile

import (
	"encoding/binary"
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
)

// Claims are kept packed: a Tables value holds one claim per element a Service
// asks for (at 10,000 Services x 10 endpoints, 30,000 to 120,000 of them)
// for as long as the Service lives, and an unpacked Element costs 64 bytes
// per key part (a Value holds an address and a prefix) where a packed one
// costs 3 to 17. A claim's key is its key space and its packed key, so the
// key is both what claims are compared by and where the element's key is
// read back from.

// Flags of one packed Value: which of its fields follow.
const (
	packAddr4 = 1 << iota
	packAddr6
	packNum
	packPrefix4
	packPrefix6
	packNum32 // Num above 16 bits: an index into an endpoint list
)

// packKey returns the claim key of an element of set with key parts key.
func packKey(set string, key []nft.Value) string {
	b := append([]byte(keySpace(set)), 0)
	return string(appendValues(b, key))
}

// unpackKey returns the key parts packed in a claim key of set.
func unpackKey(set, key string) []nft.Value {
	return unpackValues(key[len(keySpace(set))+1:])
}

func packValues(vs []nft.Value) string {
	if len(vs) == 0 {
		return ""
	}
	return string(appendValues(nil, vs))
}

// appendValues packs each value as a flag byte and the fields it names.
// An address's zone is not kept: Service and endpoint addresses have none.
func appendValues(b []byte, vs []nft.Value) []byte {
	for _, v := range vs {
		flags := byte(0)
		switch {
		case v.Addr.Is4():
			flags |= packAddr4
		case v.Addr.Is6():
			flags |= packAddr6
		}
		switch {
		case v.Num > 0xffff:
			flags |= packNum32
		case v.Num != 0:
			flags |= packNum
		}
		switch {
		case v.Prefix.IsValid() && v.Prefix.Addr().Is4():
			flags |= packPrefix4
		case v.Prefix.IsValid():
			flags |= packPrefix6
		}
		b = append(b, flags)
		if v.Addr.IsValid() {
			b = appendAddr(b, v.Addr)
		}
		switch {
		case v.Num > 0xffff:
			b = binary.BigEndian.AppendUint32(b, v.Num)
		case v.Num != 0:
			b = binary.BigEndian.AppendUint16(b, uint16(v.Num))
		}
		if v.Prefix.IsValid() {
			b = appendAddr(b, v.Prefix.Addr())
			b = append(b, byte(v.Prefix.Bits()))
		}
	}
	return b
}

func appendAddr(b []byte, a netip.Addr) []byte {
	if a.Is4() {
		a4 := a.As4()
		return append(b, a4[:]...)
	}
	a16 := a.As16()
	return append(b, a16[:]...)
}

func unpackValues(s string) []nft.Value {
	if s == "" {
		return nil
	}
	n := 0
	for rest := s; len(rest) > 0; rest = skipValue(rest) {
		n++
	}
	out, _ := unpackN(s, n)
	return out
}

// unpackN unpacks the first n values of s and returns the rest of s.
func unpackN(s string, n int) ([]nft.Value, string) {
	out := make([]nft.Value, n)
	for i := range out {
		out[i], s = unpackValue(s)
	}
	return out, s
}

func unpackValue(s string) (nft.Value, string) {
	var v nft.Value
	flags := s[0]
	s = s[1:]
	v.Addr, s = unpackAddr(s, flags&packAddr4 != 0, flags&packAddr6 != 0)
	switch {
	case flags&packNum32 != 0:
		v.Num, s = binary.BigEndian.Uint32([]byte(s[:4])), s[4:]
	case flags&packNum != 0:
		v.Num, s = uint32(s[0])<<8|uint32(s[1]), s[2:]
	}
	if flags&(packPrefix4|packPrefix6) != 0 {
		var a netip.Addr
		a, s = unpackAddr(s, flags&packPrefix4 != 0, flags&packPrefix6 != 0)
		v.Prefix, s = netip.PrefixFrom(a, int(s[0])), s[1:]
	}
	return v, s
}

// skipValue returns s without its first packed value.
func skipValue(s string) string {
	flags, n := s[0], 1
	switch {
	case flags&packAddr4 != 0:
		n += 4
	case flags&packAddr6 != 0:
		n += 16
	}
	switch {
	case flags&packNum32 != 0:
		n += 4
	case flags&packNum != 0:
		n += 2
	}
	switch {
	case flags&packPrefix4 != 0:
		n += 5
	case flags&packPrefix6 != 0:
		n += 17
	}
	return s[n:]
}

func unpackAddr(s string, is4, is6 bool) (netip.Addr, string) {
	switch {
	case is4:
		return netip.AddrFrom4([4]byte([]byte(s[:4]))), s[4:]
	case is6:
		return netip.AddrFrom16([16]byte([]byte(s[:16]))), s[16:]
	}
	return netip.Addr{}, s
}
