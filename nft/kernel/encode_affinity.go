package kernel

import (
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Lookup keys: packet fields, then an optional numgen part (nft.Numgen),
// each part in whole 32-bit registers from reg 1 on, as nft writes them.
// An IPv6 key of two addresses, a protocol, a port and a number is 40
// bytes: it fits the 64 bytes of registers.

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

// loadKey loads a lookup key: the fields, then n when used.
func loadKey(f nft.Family, keys []nft.Field, n nft.Numgen) []expr.Any {
	out := loadKeys(f, keys)
	if n.Used() {
		out = append(out, numgenKey(keyReg(keyWords(f, keys)), n))
	}
	return out
}

// numgenKey draws n's number into reg.
func numgenKey(reg uint32, n nft.Numgen) *expr.Numgen {
	return &expr.Numgen{Register: reg, Modulus: n.Mod, Type: unix.NFT_NG_RANDOM, Offset: n.Offset}
}

func encodeInSet(f nft.Family, m nft.InSet) []expr.Any {
	return append(loadKey(f, m.Keys, m.Num), lookup(m.Set, false))
}

func encodeUpdateSet(f nft.Family, u nft.UpdateSet) []expr.Any {
	return append(loadKey(f, u.Keys, u.Num), dynsetUpdate(u))
}

// encodeDNATMap looks the key up in a data map, whose value (an address,
// then a port) lands in the registers from reg 1 on, and DNATs to it.
func encodeDNATMap(f nft.Family, d nft.DNATMap) []expr.Any {
	key := loadKey(f, d.Keys, d.Num)
	if d.Hash.Used() && !d.Num.Used() {
		key = append(key, hashKey(f, d.Hash, keyWords(f, d.Keys))...)
	}
	return append(key, mapLookup(d.Map), dnatToMap(f))
}

// mapLookup looks the key in reg 1 up in a data map; the value found
// replaces it from reg 1 on.
func mapLookup(m string) *expr.Lookup {
	return &expr.Lookup{SourceRegister: reg1, SetName: m, DestRegister: reg1, IsDestRegSet: true}
}

// dnatToMap DNATs to the address in reg 1 and the port in the register
// after it.
func dnatToMap(f nft.Family) *expr.NAT {
	_, size := addrOffset(f, nft.Daddr)
	return &expr.NAT{Type: expr.NATTypeDestNAT, Family: natFamily(f), RegAddrMin: reg1,
		RegProtoMin: keyReg(size / 4), Specified: true}
}
