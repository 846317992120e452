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
		a, b, c = addWords(a, b, c, k)
		a, b, c = jhashMix(a, b, c)
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], k)
	a, b, c = addWords(a, b, c, tail[:])
	_, _, c = jhashFinal(a, b, c)
	return c
}

// addWords adds the three words of a 12-byte block to a, b and c.
func addWords(a, b, c uint32, k []byte) (uint32, uint32, uint32) {
	return a + binary.LittleEndian.Uint32(k), b + binary.LittleEndian.Uint32(k[4:]), c + binary.LittleEndian.Uint32(k[8:])
}

// jhashMix is __jhash_mix: six steps, one a line of the kernel's macro,
// each of the form x -= z; x ^= rol32(z, n); z += y.
func jhashMix(a, b, c uint32) (uint32, uint32, uint32) {
	mix := func(x, z *uint32, y uint32, n int) {
		*x -= *z
		*x ^= bits.RotateLeft32(*z, n)
		*z += y
	}
	mix(&a, &c, b, 4)
	mix(&b, &a, c, 6)
	mix(&c, &b, a, 8)
	mix(&a, &c, b, 16)
	mix(&b, &a, c, 19)
	mix(&c, &b, a, 4)
	return a, b, c
}

// jhashFinal is __jhash_final: seven steps, one a line of the kernel's
// macro, each of the form x ^= y; x -= rol32(y, n).
func jhashFinal(a, b, c uint32) (uint32, uint32, uint32) {
	final := func(x *uint32, y uint32, n int) {
		*x ^= y
		*x -= bits.RotateLeft32(y, n)
	}
	final(&c, b, 14)
	final(&a, c, 11)
	final(&b, a, 25)
	final(&c, b, 16)
	final(&a, c, 4)
	final(&b, a, 14)
	final(&c, b, 24)
	return a, b, c
}
