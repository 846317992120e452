package kernel

import (
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// decodeKeys reads the key loads at the start of ex, as loadKeys writes
// them, and returns the fields and how many expressions they took.
func decodeKeys(f nft.Family, ex []expr.Any) ([]nft.Field, int) {
	var keys []nft.Field
	for _, e := range ex {
		switch e := e.(type) {
		case *expr.Payload:
			field, ok := addrField(f, e)
			_, full := addrOffset(f, field)
			switch {
			case ok && e.Len == full:
				keys = append(keys, field)
			case isDport(e):
				keys = append(keys, nft.Dport)
			default:
				return keys, len(keys)
			}
		case *expr.Meta:
			if e.Key != expr.MetaKeyL4PROTO || e.SourceRegister {
				return keys, len(keys)
			}
			keys = append(keys, nft.L4Proto)
		default:
			return keys, len(keys)
		}
	}
	return keys, len(keys)
}

// decodeUpdateSet reads key loads, the immediates of the data and the
// dynset update.
func decodeUpdateSet(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, n := decodeKeys(f, ex)
	if n == 0 {
		return nil, 0
	}
	var data []nft.Value
	for i := n; i < len(ex); i++ {
		switch e := ex[i].(type) {
		case *expr.Immediate:
			v, ok := dataValue(f, e.Data)
			if !ok {
				return nil, 0
			}
			data = append(data, v)
		case *expr.Dynset:
			if e.Operation != unix.NFT_DYNSET_OP_UPDATE || e.SrcRegKey != reg1 || e.Invert || len(e.Exprs) > 0 {
				return nil, 0
			}
			return nft.UpdateSet{Set: e.SetName, Keys: keys, Timeout: uint32(e.Timeout.Seconds()), Data: data}, i + 1
		default:
			return nil, 0
		}
	}
	return nil, 0
}

// dataValue reads one immediate of update data: an address of the table's
// family, or a port.
func dataValue(f nft.Family, b []byte) (nft.Value, bool) {
	if len(b) == 2 {
		return nft.Value{Num: binaryutil.BigEndian.Uint16(b)}, true
	}
	a := addrFromSlice(b)
	if !a.IsValid() || nft.FamilyOf(a) != f {
		return nft.Value{}, false
	}
	return nft.Value{Addr: a}, true
}

// decodeDNATMap reads key loads, a lookup into reg 1 and a dnat from it.
func decodeDNATMap(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, n := decodeKeys(f, ex)
	if n == 0 || len(ex) < n+2 {
		return nil, 0
	}
	l, ok1 := ex[n].(*expr.Lookup)
	nat, ok2 := ex[n+1].(*expr.NAT)
	_, size := addrOffset(f, nft.Daddr)
	if !ok1 || !ok2 || !l.IsDestRegSet || l.DestRegister != reg1 || l.Invert || l.SourceRegister != reg1 ||
		nat.Type != expr.NATTypeDestNAT || nat.Family != natFamily(f) || nat.RegAddrMin != reg1 ||
		!protoReg(nat.RegProtoMin, size) {
		return nil, 0
	}
	return nft.DNATMap{Keys: keys, Map: l.SetName}, n + 2
}

// protoReg accepts the port register after an address of size bytes in reg
// 1, named either way the kernel allows (nft names NFT_REG_2 for IPv6).
func protoReg(r, size uint32) bool {
	return r == reg32_0+size/4 || (size == 16 && r == reg2)
}
