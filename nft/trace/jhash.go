package trace

import (
	"encoding/binary"
	"math/bits"
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
)

// HashValue returns the number the kernel's hash expression computes for
// the first packet of connection p: what `jhash FIELDS mod Mod seed Seed
// offset Offset` puts in the lookup key (nft_jhash_eval, kernel 6.x).
// Fields are read from p as they sit in the registers: addresses and ports
// in network byte order, each padded with zeros to whole 32-bit words.
func HashValue(h nft.Jhash, p Packet) uint32 {
	var data []byte
	for _, f := range h.Fields {
		data = appendField(data, f, p)
	}
	// reciprocal_scale: the hash scaled into [0, Mod), not taken modulo.
	scaled := uint32((uint64(Jhash(data, h.Seed)) * uint64(h.Mod)) >> 32)
	return scaled + h.Offset
}

func appendField(b []byte, f nft.Field, p Packet) []byte {
	switch f {
	case nft.Saddr:
		return appendAddr(b, p.Saddr)
	case nft.Daddr:
		return appendAddr(b, p.Daddr)
	case nft.Sport:
		return append(binary.BigEndian.AppendUint16(b, p.Sport), 0, 0)
	case nft.Dport:
		return append(binary.BigEndian.AppendUint16(b, p.Dport), 0, 0)
	case nft.L4Proto:
		return append(b, p.Proto, 0, 0, 0)
	}
	return b
}

func appendAddr(b []byte, a netip.Addr) []byte { return append(b, a.AsSlice()...) }

// Jhash is the kernel's jhash() (include/linux/jhash.h, Bob Jenkins'
// lookup3): words are read in host byte order, which is little-endian on
// every machine nftproxy runs on.
func Jhash(key []byte, initval uint32) uint32 {
	a := 0xdeadbeef + uint32(len(key)) + initval
	b, c := a, a
	k := key
	for len(k) > 12 {
		a += binary.LittleEndian.Uint32(k)
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		a, b, c = jhashMix(a, b, c)
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], k)
	a += binary.LittleEndian.Uint32(tail[:])
	b += binary.LittleEndian.Uint32(tail[4:])
	c += binary.LittleEndian.Uint32(tail[8:])
	_, _, c = jhashFinal(a, b, c)
	return c
}

func jhashMix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= bits.RotateLeft32(c, 4)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 6)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 8)
	b += a
	a -= c
	a ^= bits.RotateLeft32(c, 16)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 19)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 4)
	b += a
	return a, b, c
}

func jhashFinal(a, b, c uint32) (uint32, uint32, uint32) {
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return a, b, c
}
