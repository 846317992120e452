package kernel

import (
	"time"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// decodeKeys reads the key loads at the start of ex, each into the
// register loadKeys puts it in, and returns the fields and how many
// expressions they took.
func decodeKeys(f nft.Family, ex []expr.Any) ([]nft.Field, int) {
	var keys []nft.Field
	for _, e := range ex {
		field, ok := keyField(f, e, keyRegister(f, keys))
		if !ok {
			break
		}
		keys = append(keys, field)
	}
	return keys, len(keys)
}

// keyRegister is the register the part after keys is loaded into.
func keyRegister(f nft.Family, keys []nft.Field) uint32 {
	return keyReg(keyWords(f, keys))
}

// keyField reads e as the load of one key part into reg.
func keyField(f nft.Family, e expr.Any, reg uint32) (nft.Field, bool) {
	switch e := e.(type) {
	case *expr.Payload:
		if *e == *loadDport(reg) {
			return nft.Dport, true
		}
		field, ok := addrField(f, e, reg)
		_, full := addrOffset(f, field)
		return field, ok && e.Len == full
	case *expr.Meta:
		return nft.L4Proto, *e == *loadL4Proto(reg)
	}
	return 0, false
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
	words := keyWords(f, keys)
	for ; n < len(ex); n++ {
		imm, ok := ex[n].(*expr.Immediate)
		if !ok {
			return keys, consts, n
		}
		v, ok := constValue(f, imm.Data)
		if !ok || imm.Register != keyReg(words) {
			return nil, nil, 0
		}
		consts = append(consts, v)
		words += uint32(len(imm.Data)+3) / 4
	}
	return keys, consts, n
}

// decodeUpdateSet reads a key and the dynset update that uses it. Timeouts
// are whole seconds: nft.UpdateSet holds seconds.
func decodeUpdateSet(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, consts, n := decodeConsts(f, ex)
	if n == 0 || n >= len(ex) {
		return nil, 0
	}
	e, ok := ex[n].(*expr.Dynset)
	if !ok || e.Timeout%time.Second != 0 || e.Timeout < 0 {
		return nil, 0
	}
	u := nft.UpdateSet{Set: e.SetName, Keys: keys, Consts: consts, Timeout: uint32(e.Timeout / time.Second)}
	if !sameDynset(e, dynsetUpdate(u)) {
		return nil, 0
	}
	return u, n + 1
}

func sameDynset(a, b *expr.Dynset) bool {
	return a.SrcRegKey == b.SrcRegKey && a.SrcRegData == b.SrcRegData && a.SetID == b.SetID && a.SetName == b.SetName &&
		a.Operation == b.Operation && a.Timeout == b.Timeout && a.Invert == b.Invert && len(a.Exprs) == 0 && len(b.Exprs) == 0
}

// decodeInSetWith reads a key with constant parts and the lookup that uses
// it; without constants the lookup is an InSet (decodeLookup).
func decodeInSetWith(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, consts, n := decodeConsts(f, ex)
	if n == 0 || len(consts) == 0 || n >= len(ex) {
		return nil, 0
	}
	l, ok := ex[n].(*expr.Lookup)
	if !ok || *l != *lookup(l.SetName, false) {
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

// dynsetUpdate adds the key in reg 1 to u's set, or refreshes its timeout.
func dynsetUpdate(u nft.UpdateSet) *expr.Dynset {
	return &expr.Dynset{SrcRegKey: reg1, SetName: u.Set, Operation: unix.NFT_DYNSET_OP_UPDATE,
		Timeout: time.Duration(u.Timeout) * time.Second}
}
