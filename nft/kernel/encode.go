package kernel

import (
	"fmt"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Registers: reg 1 is the first 16-byte register; later parts of a
// concatenated key go in the 32-bit registers that follow it (keyReg).
const (
	reg1    uint32 = unix.NFT_REG_1
	reg2    uint32 = unix.NFT_REG_2
	reg32_0 uint32 = unix.NFT_REG32_00
)

// keyReg is the register of a key part that starts words 32-bit words
// after the start of reg 1. A part that starts a 16-byte register is
// written as that register (NFT_REG_2 for the fifth word), because that is
// how the kernel numbers it when it dumps the rule (nft_dump_register,
// kernel 6.x): a dump of our rule then holds the very registers we sent,
// which the decoder insists on.
func keyReg(words uint32) uint32 {
	if words%4 == 0 {
		return reg1 + words/4
	}
	return reg32_0 + words
}

func encodeStmt(f nft.Family, s nft.Stmt) ([]expr.Any, error) {
	switch s := s.(type) {
	case nft.MatchAddr:
		return encodeMatchAddr(f, s), nil
	case nft.MatchProto:
		return []expr.Any{loadL4Proto(reg1), cmpEq(reg1, []byte{s.Proto})}, nil
	case nft.MatchPort:
		return []expr.Any{loadDport(reg1), cmpEq(reg1, binaryutil.BigEndian.PutUint16(s.Port))}, nil
	case nft.MatchNew:
		return matchCtState(expr.CtStateBitNEW), nil
	case nft.MatchInvalid:
		return matchCtState(expr.CtStateBitINVALID), nil
	case nft.MatchMarkClear:
		return []expr.Any{loadMark(), maskReg(s.Bits), cmpEq(reg1, native32(0))}, nil
	case nft.InSet:
		return encodeInSet(f, s), nil
	case nft.Vmap:
		return append(loadKeys(f, s.Keys), lookup(s.Map, true)), nil
	case nft.Random:
		return encodeRandom(s), nil
	case nft.SetMark:
		return encodeSetMark(s), nil
	case nft.DNAT:
		return encodeDNAT(f, s), nil
	case nft.Masquerade:
		return []expr.Any{&expr.Masq{FullyRandom: true}}, nil
	case nft.Reject:
		return []expr.Any{encodeReject(f)}, nil
	case nft.Verdict:
		return []expr.Any{encodeVerdict(s)}, nil
	case nft.UpdateSet:
		return encodeUpdateSet(f, s), nil
	case nft.DNATMap:
		return encodeDNATMap(f, s), nil
	case nft.MatchFibLocal:
		return encodeFibLocal(), nil
	case nft.CountInto:
		return []expr.Any{countInto(s)}, nil
	}
	return nil, fmt.Errorf("statement %T cannot be encoded", s)
}

func cmpEq(reg uint32, data []byte) *expr.Cmp {
	return &expr.Cmp{Op: expr.CmpOpEq, Register: reg, Data: data}
}

func native32(v uint32) []byte { return binaryutil.NativeEndian.PutUint32(v) }

// maskReg keeps only bits of the 4-byte host-order value in reg 1.
func maskReg(bits uint32) *expr.Bitwise {
	return &expr.Bitwise{SourceRegister: reg1, DestRegister: reg1, Len: 4, Mask: native32(bits), Xor: native32(0)}
}

func loadMark() *expr.Meta { return &expr.Meta{Key: expr.MetaKeyMARK, Register: reg1} }
func storeMark() *expr.Meta {
	return &expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: reg1}
}

func loadL4Proto(reg uint32) *expr.Meta { return &expr.Meta{Key: expr.MetaKeyL4PROTO, Register: reg} }

func loadDport(reg uint32) *expr.Payload {
	return &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2}
}

// addrOffset is where the source and destination addresses sit in the
// network header of family f.
func addrOffset(f nft.Family, field nft.Field) (offset, size uint32) {
	if f == nft.IPv6 {
		if field == nft.Saddr {
			return 8, 16
		}
		return 24, 16
	}
	if field == nft.Saddr {
		return 12, 4
	}
	return 16, 4
}

func loadAddr(f nft.Family, field nft.Field, reg, size uint32) *expr.Payload {
	off, _ := addrOffset(f, field)
	return &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: size}
}

// loadKeys loads a (possibly concatenated) lookup key starting at reg 1.
// Each part takes whole 32-bit registers, as the kernel's set code expects.
func loadKeys(f nft.Family, keys []nft.Field) []expr.Any { return loadFields(f, keys, 0) }

// loadFields loads fields into consecutive words from word start.
func loadFields(f nft.Family, fields []nft.Field, start uint32) []expr.Any {
	var out []expr.Any
	words := start
	for _, k := range fields {
		reg := keyReg(words)
		switch k {
		case nft.Sport:
			out = append(out, loadSport(reg))
			words++
		case nft.Dport:
			out = append(out, loadDport(reg))
			words++
		case nft.L4Proto:
			out = append(out, loadL4Proto(reg))
			words++
		default:
			_, size := addrOffset(f, k)
			out = append(out, loadAddr(f, k, reg, size))
			words += size / 4
		}
	}
	return out
}

// encodeMatchAddr loads only the bytes the prefix covers, masking the last
// one when the prefix does not end on a byte boundary, as nft does.
func encodeMatchAddr(f nft.Family, m nft.MatchAddr) []expr.Any {
	bits := m.Prefix.Bits()
	size := uint32((bits + 7) / 8)
	addr := m.Prefix.Masked().Addr().AsSlice()[:size]
	out := []expr.Any{loadAddr(f, m.Field, reg1, size)}
	if bits%8 != 0 {
		mask := make([]byte, size)
		for i := range mask {
			mask[i] = 0xff
		}
		mask[size-1] = byte(0xff << (8 - bits%8))
		out = append(out, &expr.Bitwise{SourceRegister: reg1, DestRegister: reg1, Len: size, Mask: mask, Xor: make([]byte, size)})
	}
	op := expr.CmpOpEq
	if m.Neg {
		op = expr.CmpOpNeq
	}
	return append(out, &expr.Cmp{Op: op, Register: reg1, Data: addr})
}

// encodeRandom draws numgen random mod Mod. A "< Below" comparison needs the
// host-order number in network order first, since cmp compares bytes.
func encodeRandom(r nft.Random) []expr.Any {
	ng := numgenRandom(r.Mod)
	if r.Below == 1 {
		return []expr.Any{ng, cmpEq(reg1, native32(0))}
	}
	return []expr.Any{ng, hostToNetwork32(),
		&expr.Cmp{Op: expr.CmpOpLt, Register: reg1, Data: binaryutil.BigEndian.PutUint32(r.Below)}}
}

func numgenRandom(mod uint32) *expr.Numgen {
	return &expr.Numgen{Register: reg1, Modulus: mod, Type: unix.NFT_NG_RANDOM}
}

// hostToNetwork32 turns the 4-byte host-order value in reg 1 around.
func hostToNetwork32() *expr.Byteorder {
	return &expr.Byteorder{SourceRegister: reg1, DestRegister: reg1, Op: expr.ByteorderHton, Len: 4, Size: 4}
}

// encodeSetMark is mark = (mark & mask) ^ xor: OR clears then sets the bits,
// XOR keeps every bit and toggles them.
func encodeSetMark(m nft.SetMark) []expr.Any {
	mask := ^m.Bits
	if m.Op == nft.MarkXor {
		mask = 0xffffffff
	}
	return []expr.Any{loadMark(),
		&expr.Bitwise{SourceRegister: reg1, DestRegister: reg1, Len: 4, Mask: native32(mask), Xor: native32(m.Bits)},
		storeMark()}
}

func encodeDNAT(f nft.Family, d nft.DNAT) []expr.Any {
	return []expr.Any{loadL4Proto(reg1), cmpEq(reg1, []byte{d.Proto}),
		&expr.Immediate{Register: reg1, Data: d.Addr.AsSlice()},
		&expr.Immediate{Register: reg2, Data: binaryutil.BigEndian.PutUint16(d.Port)},
		dnatTo(f)}
}

// dnatTo rewrites the destination to the address in reg 1 and the port in
// reg 2.
func dnatTo(f nft.Family) *expr.NAT {
	return &expr.NAT{Type: expr.NATTypeDestNAT, Family: natFamily(f), RegAddrMin: reg1, RegProtoMin: reg2, Specified: true}
}

// lookup looks the key in reg 1 up in the named set; in a verdict map
// (vmap) the element's verdict applies.
func lookup(set string, vmap bool) *expr.Lookup {
	return &expr.Lookup{SourceRegister: reg1, SetName: set, IsDestRegSet: vmap}
}

func natFamily(f nft.Family) uint32 {
	if f == nft.IPv6 {
		return unix.NFPROTO_IPV6
	}
	return unix.NFPROTO_IPV4
}

// ICMP codes for "port unreachable": what a closed port answers, so a TCP
// client sees ECONNREFUSED at once.
const (
	icmpPortUnreach   = 3
	icmpv6PortUnreach = 4
)

func encodeReject(f nft.Family) *expr.Reject {
	if f == nft.IPv6 {
		return &expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: icmpv6PortUnreach}
	}
	return &expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: icmpPortUnreach}
}

var verdictKinds = map[nft.VerdictKind]expr.VerdictKind{
	nft.Jump: expr.VerdictJump, nft.Goto: expr.VerdictGoto, nft.Return: expr.VerdictReturn,
	nft.Accept: expr.VerdictAccept, nft.Drop: expr.VerdictDrop,
}

func encodeVerdict(v nft.Verdict) *expr.Verdict {
	return &expr.Verdict{Kind: verdictKinds[v.Kind], Chain: v.Chain}
}

// matchCtState matches packets whose conntrack state has bit set: nft's
// "ct state new" is "ct state & new != 0".
func matchCtState(bit uint32) []expr.Any {
	return []expr.Any{&expr.Ct{Register: reg1, Key: expr.CtKeySTATE},
		maskReg(bit), &expr.Cmp{Op: expr.CmpOpNeq, Register: reg1, Data: native32(0)}}
}
