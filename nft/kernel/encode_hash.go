package kernel

import (
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// A hash key part (nft.Jhash) is computed in the registers it ends up in:
// its fields are loaded from the key's last word on, the hash reads them
// and writes its number over the first of them. The kernel reads every
// source word before it writes the result (nft_jhash_eval), so the overlap
// is safe, and it keeps an IPv6 key inside the 64 bytes of registers: the
// key's six words, then the 40 bytes of `saddr . sport . daddr . dport`.

// hashWords is how many 32-bit words the fields of h take.
func hashWords(f nft.Family, h nft.Jhash) uint32 {
	return keyWords(f, h.Fields)
}

func loadSport(reg uint32) *expr.Payload {
	return &expr.Payload{DestRegister: reg, Base: expr.PayloadBaseTransportHeader, Offset: 0, Len: 2}
}

// hashKey loads h's fields from word start and hashes them into that word.
// The seed is always sent: google/nftables omits a zero seed, and without
// one the kernel draws a random seed for the rule, which would make nodes
// disagree (proxy/compile never writes seed 0).
func hashKey(f nft.Family, h nft.Jhash, start uint32) []expr.Any {
	reg := keyReg(start)
	return append(loadFields(f, h.Fields, start), &expr.Hash{SourceRegister: reg, DestRegister: reg,
		Length: hashWords(f, h) * 4, Modulus: h.Mod, Seed: h.Seed, Offset: h.Offset, Type: unix.NFT_HASH_JENKINS})
}

// decodeHashKey reads a hash key part as hashKey writes it from word start
// and returns how many expressions it took, 0 when ex does not start with
// one.
func decodeHashKey(f nft.Family, ex []expr.Any, start uint32) (nft.Jhash, int) {
	var fields []nft.Field
	for i, e := range ex {
		if h, ok := e.(*expr.Hash); ok && len(fields) > 0 {
			want := nft.Jhash{Fields: fields, Mod: h.Modulus, Seed: h.Seed, Offset: h.Offset}
			enc := hashKey(f, want, start)
			if h.Modulus == 0 || h.Seed == 0 || *h != *enc[len(enc)-1].(*expr.Hash) {
				return nft.Jhash{}, 0
			}
			return want, i + 1
		}
		field, ok := hashField(f, e, keyReg(start+keyWords(f, fields)))
		if !ok {
			return nft.Jhash{}, 0
		}
		fields = append(fields, field)
	}
	return nft.Jhash{}, 0
}

// hashField reads e as the load of one hash field into reg.
func hashField(f nft.Family, e expr.Any, reg uint32) (nft.Field, bool) {
	if p, ok := e.(*expr.Payload); ok && *p == *loadSport(reg) {
		return nft.Sport, true
	}
	return keyField(f, e, reg)
}
