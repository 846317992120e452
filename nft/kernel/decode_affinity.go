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

// decodeConsts reads the key loads and the immediates of constant parts
// at the start of ex, as loadKey writes them, and returns the index of the
// expression after them.
func decodeConsts(f nft.Family, ex []expr.Any) ([]nft.Field, []nft.Value, int) {
	keys, n := decodeKeys(f, ex)
	if n == 0 {
		return nil, nil, 0
	}
	var consts []nft.Value
	for ; n < len(ex); n++ {
		imm, ok := ex[n].(*expr.Immediate)
		if !ok {
			return keys, consts, n
		}
		v, ok := constValue(f, imm.Data)
		if !ok {
			return nil, nil, 0
		}
		consts = append(consts, v)
	}
	return keys, consts, n
}

// decodeUpdateSet reads a key and the dynset update that uses it.
func decodeUpdateSet(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, consts, n := decodeConsts(f, ex)
	if n == 0 || n >= len(ex) {
		return nil, 0
	}
	e, ok := ex[n].(*expr.Dynset)
	if !ok || e.Operation != unix.NFT_DYNSET_OP_UPDATE || e.SrcRegKey != reg1 || e.SrcRegData != 0 || e.Invert || len(e.Exprs) > 0 {
		return nil, 0
	}
	return nft.UpdateSet{Set: e.SetName, Keys: keys, Consts: consts, Timeout: uint32(e.Timeout.Seconds())}, n + 1
}

// decodeInSetWith reads a key with constant parts and the lookup that uses
// it; without constants the lookup is an InSet (decodeLookup).
func decodeInSetWith(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, consts, n := decodeConsts(f, ex)
	if n == 0 || len(consts) == 0 || n >= len(ex) {
		return nil, 0
	}
	l, ok := ex[n].(*expr.Lookup)
	if !ok || l.IsDestRegSet || l.Invert || l.SourceRegister != reg1 {
		return nil, 0
	}
	return nft.InSetWith{Keys: keys, Consts: consts, Set: l.SetName}, n + 1
}

// constValue reads one constant key part: an address of the table's
// family, or a port.
func constValue(f nft.Family, b []byte) (nft.Value, bool) {
	if len(b) == 2 {
		return nft.Value{Num: binaryutil.BigEndian.Uint16(b)}, true
	}
	a := addrFromSlice(b)
	if !a.IsValid() || nft.FamilyOf(a) != f {
		return nft.Value{}, false
	}
	return nft.Value{Addr: a}, true
}
