package kernel

import (
	"net/netip"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"

	"github.com/nftproxy/nftproxy/nft"
)

func decodeDNAT(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 5 {
		return nil, 0
	}
	proto, n := decodeProto(f, ex)
	addr, ok1 := ex[2].(*expr.Immediate)
	port, ok2 := ex[3].(*expr.Immediate)
	nat, ok3 := ex[4].(*expr.NAT)
	if n == 0 || !ok1 || !ok2 || !ok3 || nat.Type != expr.NATTypeDestNAT || nat.Family != natFamily(f) ||
		nat.RegAddrMin != addr.Register || nat.RegProtoMin != port.Register || len(port.Data) != 2 {
		return nil, 0
	}
	ip, ok := netip.AddrFromSlice(addr.Data)
	if !ok || nft.FamilyOf(ip) != f {
		return nil, 0
	}
	return nft.DNAT{Proto: proto.(nft.MatchProto).Proto, Addr: ip, Port: binaryutil.BigEndian.Uint16(port.Data)}, 5
}

func decodeProto(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 2 {
		return nil, 0
	}
	m, ok1 := ex[0].(*expr.Meta)
	cmp, ok2 := ex[1].(*expr.Cmp)
	if ok1 && ok2 && m.Key == expr.MetaKeyL4PROTO && !m.SourceRegister && cmp.Op == expr.CmpOpEq &&
		len(cmp.Data) == 1 && cmp.Register == m.Register {
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
	if ok1 && ok2 && isDport(p) && cmp.Op == expr.CmpOpEq && len(cmp.Data) == 2 {
		return nft.MatchPort{Port: binaryutil.BigEndian.Uint16(cmp.Data)}, 2
	}
	return nil, 0
}

func isDport(p *expr.Payload) bool {
	return p.OperationType == expr.PayloadLoad && p.Base == expr.PayloadBaseTransportHeader && p.Offset == 2 && p.Len == 2
}

// addrField tells which address a payload load reads, and how many bytes.
func addrField(f nft.Family, p *expr.Payload) (nft.Field, bool) {
	if p.OperationType != expr.PayloadLoad || p.Base != expr.PayloadBaseNetworkHeader {
		return 0, false
	}
	for _, field := range []nft.Field{nft.Saddr, nft.Daddr} {
		if off, _ := addrOffset(f, field); off == p.Offset {
			return field, true
		}
	}
	return 0, false
}

// decodeAddr reads an address or prefix match: the load of the prefix's
// bytes, an optional mask of the last byte, and the comparison.
func decodeAddr(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	p, ok := ex[0].(*expr.Payload)
	if !ok || len(ex) < 2 {
		return nil, 0
	}
	field, ok := addrField(f, p)
	_, full := addrOffset(f, field)
	if !ok || p.Len == 0 || p.Len > full {
		return nil, 0
	}
	bits, n := int(p.Len)*8, 1
	if bw, ok := ex[1].(*expr.Bitwise); ok && bw.Len == p.Len && len(bw.Mask) == int(p.Len) {
		bits = int(p.Len)*8 - 8 + prefixLen(bw.Mask[p.Len-1])
		n = 2
	}
	if len(ex) <= n {
		return nil, 0
	}
	cmp, ok := ex[n].(*expr.Cmp)
	if !ok || (cmp.Op != expr.CmpOpEq && cmp.Op != expr.CmpOpNeq) || len(cmp.Data) != int(p.Len) {
		return nil, 0
	}
	addr := make([]byte, full)
	copy(addr, cmp.Data)
	ip, _ := netip.AddrFromSlice(addr)
	return nft.MatchAddr{Field: field, Neg: cmp.Op == expr.CmpOpNeq, Prefix: netip.PrefixFrom(ip, bits)}, n + 1
}

func prefixLen(b byte) int {
	n := 0
	for b&0x80 != 0 {
		n++
		b <<= 1
	}
	return n
}

// decodeLookup reads the key loads of a set lookup or verdict-map lookup.
func decodeLookup(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, n := decodeKeys(f, ex)
	if n == len(ex) {
		return nil, 0
	}
	l, ok := ex[n].(*expr.Lookup)
	if !ok {
		return nil, 0
	}
	return lookupStmt(keys, l, n)
}

func lookupStmt(keys []nft.Field, l *expr.Lookup, i int) (nft.Stmt, int) {
	if len(keys) == 0 || l.Invert || l.SourceRegister != reg1 {
		return nil, 0
	}
	if l.IsDestRegSet {
		if l.DestRegister != 0 {
			return nil, 0
		}
		return nft.Vmap{Keys: keys, Map: l.SetName}, i + 1
	}
	return nft.InSet{Keys: keys, Set: l.SetName}, i + 1
}
