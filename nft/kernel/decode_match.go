package kernel

import (
	"net/netip"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"

	"github.com/nftproxy/nftproxy/nft"
)

// decodeDNAT reads the protocol match, the two immediates and the nat
// expression encodeDNAT writes. The kernel dumps a nat expression with its
// max registers equal to the min ones, which we leave unset: both are ours.
func decodeDNAT(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 5 {
		return nil, 0
	}
	proto, n := decodeProto(f, ex)
	addr, ok1 := ex[2].(*expr.Immediate)
	port, ok2 := ex[3].(*expr.Immediate)
	nat, ok3 := ex[4].(*expr.NAT)
	if n == 0 || !ok1 || !ok2 || !ok3 || addr.Register != reg1 || port.Register != reg2 || len(port.Data) != 2 {
		return nil, 0
	}
	ip, ok := netip.AddrFromSlice(addr.Data)
	if !ok || nft.FamilyOf(ip) != f || !isDNAT(f, nat) {
		return nil, 0
	}
	return nft.DNAT{Proto: proto.(nft.MatchProto).Proto, Addr: ip, Port: binaryutil.BigEndian.Uint16(port.Data)}, 5
}

func isDNAT(f nft.Family, nat *expr.NAT) bool { return isDNATFrom(f, nat, dnatTo(f)) }

// isDNATFrom reports whether nat is want as the kernel dumps it: with its
// max registers equal to the min ones, which we leave unset.
func isDNATFrom(f nft.Family, nat, want *expr.NAT) bool {
	n := *nat
	if n.RegAddrMax == want.RegAddrMin && n.RegProtoMax == want.RegProtoMin {
		n.RegAddrMax, n.RegProtoMax = 0, 0
	}
	return n == *want
}

func decodeProto(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 2 {
		return nil, 0
	}
	m, ok1 := ex[0].(*expr.Meta)
	cmp, ok2 := ex[1].(*expr.Cmp)
	if ok1 && ok2 && *m == *loadL4Proto(reg1) && isCmp(cmp, expr.CmpOpEq, 1) {
		return nft.MatchProto{Proto: cmp.Data[0]}, 2
	}
	return nil, 0
}

func decodePort(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 2 {
		return nil, 0
	}
	p, ok1 := ex[0].(*expr.Payload)
	cmp, ok2 := ex[1].(*expr.Cmp)
	if ok1 && ok2 && *p == *loadDport(reg1) && isCmp(cmp, expr.CmpOpEq, 2) {
		return nft.MatchPort{Port: binaryutil.BigEndian.Uint16(cmp.Data)}, 2
	}
	return nil, 0
}

// addrField tells which address a payload load into reg reads: a load of
// size bytes at the start of the source or destination address.
func addrField(f nft.Family, p *expr.Payload, reg uint32) (nft.Field, bool) {
	for _, field := range []nft.Field{nft.Saddr, nft.Daddr} {
		if *p == *loadAddr(f, field, reg, p.Len) {
			return field, true
		}
	}
	return 0, false
}

// decodeAddr reads an address or prefix match as encodeMatchAddr writes
// it: the load of the bytes the prefix covers, a mask of the last byte when
// the prefix does not end on a byte boundary, and the comparison with the
// masked address.
func decodeAddr(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	p, ok := ex[0].(*expr.Payload)
	if !ok || len(ex) < 2 {
		return nil, 0
	}
	field, ok := addrField(f, p, reg1)
	_, full := addrOffset(f, field)
	if !ok || p.Len == 0 || p.Len > full {
		return nil, 0
	}
	bits, n := int(p.Len)*8, 1
	if bw, ok := ex[1].(*expr.Bitwise); ok {
		last, ok := prefixMask(bw, p.Len)
		if !ok {
			return nil, 0
		}
		bits, n = int(p.Len)*8-8+last, 2
	}
	if len(ex) <= n {
		return nil, 0
	}
	cmp, ok := ex[n].(*expr.Cmp)
	if !ok || (!isCmp(cmp, expr.CmpOpEq, int(p.Len)) && !isCmp(cmp, expr.CmpOpNeq, int(p.Len))) {
		return nil, 0
	}
	addr := make([]byte, full)
	copy(addr, cmp.Data)
	ip, _ := netip.AddrFromSlice(addr)
	prefix := netip.PrefixFrom(ip, bits)
	if prefix.Masked() != prefix {
		return nil, 0 // host bits: not an address we compare with
	}
	return nft.MatchAddr{Field: field, Neg: cmp.Op == expr.CmpOpNeq, Prefix: prefix}, n + 1
}

// prefixMask reads the mask encodeMatchAddr puts on a load of size bytes:
// every byte 0xff but the last, which holds 1 to 7 leading ones. It returns
// their number.
func prefixMask(bw *expr.Bitwise, size uint32) (int, bool) {
	if !isReg1Bitwise(bw, size) {
		return 0, false
	}
	for i := range size - 1 {
		if bw.Mask[i] != 0xff || bw.Xor[i] != 0 {
			return 0, false
		}
	}
	last := bw.Mask[size-1]
	n := prefixLen(last)
	if n == 0 || n == 8 || last != byte(0xff<<(8-n)) || bw.Xor[size-1] != 0 {
		return 0, false
	}
	return n, true
}

func prefixLen(b byte) int {
	n := 0
	for b&0x80 != 0 {
		n++
		b <<= 1
	}
	return n
}

// decodeLookup reads the key loads of a set lookup, a verdict-map lookup
// or a data-map lookup that a dnat uses.
func decodeLookup(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, num, n := decodeKey(f, ex)
	if len(keys) == 0 || n == len(ex) {
		return nil, 0
	}
	var hash nft.Jhash
	if !num.Used() {
		keys, hash, n = splitHashKey(f, ex, keys)
	}
	if n == len(ex) {
		return nil, 0
	}
	l, ok := ex[n].(*expr.Lookup)
	if !ok {
		return nil, 0
	}
	switch *l {
	case *lookup(l.SetName, false):
		if !hash.Used() {
			return nft.InSet{Keys: keys, Num: num, Set: l.SetName}, n + 1
		}
	case *lookup(l.SetName, true):
		if !num.Used() && !hash.Used() {
			return nft.Vmap{Keys: keys, Map: l.SetName}, n + 1
		}
	case *mapLookup(l.SetName):
		if n+1 < len(ex) {
			if nat, ok := ex[n+1].(*expr.NAT); ok && isDNATFrom(f, nat, dnatToMap(f)) {
				return nft.DNATMap{Keys: keys, Num: num, Hash: hash, Map: l.SetName}, n + 2
			}
		}
	}
	return nil, 0
}

// splitHashKey finds a hash part after the key loads of keys, read from
// the start of ex. The loads of the hash's fields can read as more key
// parts (an address in the next word), so the hash is tried after each
// shorter prefix of keys, longest first. It returns the key, its hash part
// and how many expressions they took: keys unchanged when there is no hash.
func splitHashKey(f nft.Family, ex []expr.Any, keys []nft.Field) ([]nft.Field, nft.Jhash, int) {
	for k := len(keys); k > 0; k-- {
		if h, n := decodeHashKey(f, ex[k:], keyWords(f, keys[:k])); n > 0 {
			return keys[:k], h, k + n
		}
	}
	return keys, nft.Jhash{}, len(keys)
}
