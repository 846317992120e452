package kernel

import (
	"time"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

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

// encodeUpdateSet loads the key from reg 1 on and the data into the
// registers right after it. nft 1.0.6 starts the data at the next 16-byte
// register instead, which overflows the register file for an IPv6 key of 40
// bytes and data of 20 ("netlink_gen_expr: Assertion `dreg < ctx->reg_low'");
// the kernel takes any 32-bit register, so we pack them.
func encodeUpdateSet(f nft.Family, u nft.UpdateSet) []expr.Any {
	out := loadKeys(f, u.Keys)
	reg := reg32_0 + keyWords(f, u.Keys)
	for _, v := range u.Data {
		b := dataBytes(v)
		out = append(out, &expr.Immediate{Register: reg, Data: b})
		reg += uint32(len(b)+3) / 4
	}
	ds := &expr.Dynset{SrcRegKey: reg1, SetName: u.Set, Operation: unix.NFT_DYNSET_OP_UPDATE,
		Timeout: time.Duration(u.Timeout) * time.Second}
	if len(u.Data) > 0 {
		ds.SrcRegData = reg32_0 + keyWords(f, u.Keys)
	}
	return append(out, ds)
}

// dataBytes is the value of one data part: an address or a port.
func dataBytes(v nft.Value) []byte {
	if v.Addr.IsValid() {
		return v.Addr.AsSlice()
	}
	return binaryutil.BigEndian.PutUint16(v.Num)
}

// encodeDNATMap looks the key up with the result (address, then port in the
// next 32-bit register) written over reg 1, as nft does.
func encodeDNATMap(f nft.Family, d nft.DNATMap) []expr.Any {
	_, size := addrOffset(f, nft.Daddr)
	out := append(loadKeys(f, d.Keys), &expr.Lookup{SourceRegister: reg1, SetName: d.Map, IsDestRegSet: true, DestRegister: reg1})
	return append(out, &expr.NAT{Type: expr.NATTypeDestNAT, Family: natFamily(f),
		RegAddrMin: reg1, RegAddrMax: reg1, RegProtoMin: reg32_0 + size/4, RegProtoMax: reg32_0 + size/4, Specified: true})
}
