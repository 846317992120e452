package kernel

import (
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"

	"github.com/nftproxy/nftproxy/nft"
)

// keyWords is how many 32-bit registers a key loaded by loadKeys fills.
func keyWords(f nft.Family, keys []nft.Field) uint32 {
	words := uint32(0)
	for _, k := range keys {
		if k == nft.Saddr || k == nft.Daddr {
			_, size := addrOffset(f, k)
			words += size / 4
			continue
		}
		words++
	}
	return words
}

// loadKey loads a concatenation of packet fields and then constants from
// reg 1 on, each part in whole 32-bit registers. An IPv6 affinity key is
// 56 bytes: it fits the 64 bytes of registers, as nft allocates them too.
func loadKey(f nft.Family, keys []nft.Field, consts []nft.Value) []expr.Any {
	out := loadKeys(f, keys)
	words := keyWords(f, keys)
	for _, v := range consts {
		b := constBytes(v)
		out = append(out, &expr.Immediate{Register: keyReg(words), Data: b})
		words += uint32(len(b)+3) / 4
	}
	return out
}

// constBytes is the value of one constant part: an address or a port.
func constBytes(v nft.Value) []byte {
	if v.Addr.IsValid() {
		return v.Addr.AsSlice()
	}
	return binaryutil.BigEndian.PutUint16(v.Num)
}

func encodeInSetWith(f nft.Family, m nft.InSetWith) []expr.Any {
	return append(loadKey(f, m.Keys, m.Consts), lookup(m.Set, false))
}

func encodeUpdateSet(f nft.Family, u nft.UpdateSet) []expr.Any {
	return append(loadKey(f, u.Keys, u.Consts), dynsetUpdate(u))
}
