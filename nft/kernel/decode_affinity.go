package kernel

import (
	"time"

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

// decodeKey reads the loads of a lookup key at the start of ex, as loadKey
// writes them, and returns how many expressions they took.
func decodeKey(f nft.Family, ex []expr.Any) ([]nft.Field, nft.Numgen, int) {
	keys, n := decodeKeys(f, ex)
	if n == 0 || n == len(ex) {
		return keys, nft.Numgen{}, n
	}
	ng, ok := ex[n].(*expr.Numgen)
	if !ok {
		return keys, nft.Numgen{}, n
	}
	num := nft.Numgen{Mod: ng.Modulus, Offset: ng.Offset}
	if num.Mod == 0 || *ng != *numgenKey(keyRegister(f, keys), num) {
		return nil, nft.Numgen{}, 0
	}
	return keys, num, n + 1
}

// decodeUpdateSet reads a key and the dynset update that uses it. Timeouts
// are whole seconds: nft.UpdateSet holds seconds.
func decodeUpdateSet(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	keys, num, n := decodeKey(f, ex)
	if n == 0 || n >= len(ex) {
		return nil, 0
	}
	e, ok := ex[n].(*expr.Dynset)
	if !ok || e.Timeout%time.Second != 0 || e.Timeout < 0 {
		return nil, 0
	}
	u := nft.UpdateSet{Set: e.SetName, Keys: keys, Num: num, Timeout: uint32(e.Timeout / time.Second)}
	if !sameDynset(e, dynsetUpdate(u)) {
		return nil, 0
	}
	return u, n + 1
}

func sameDynset(a, b *expr.Dynset) bool {
	return a.SrcRegKey == b.SrcRegKey && a.SrcRegData == b.SrcRegData && a.SetID == b.SetID && a.SetName == b.SetName &&
		a.Operation == b.Operation && a.Timeout == b.Timeout && a.Invert == b.Invert && len(a.Exprs) == 0 && len(b.Exprs) == 0
}

// dynsetUpdate adds the key in reg 1 to u's set, or refreshes its timeout.
func dynsetUpdate(u nft.UpdateSet) *expr.Dynset {
	return &expr.Dynset{SrcRegKey: reg1, SetName: u.Set, Operation: unix.NFT_DYNSET_OP_UPDATE,
		Timeout: time.Duration(u.Timeout) * time.Second}
}
