package kernel

import (
	"fmt"
	"strings"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// decodeRule turns a rule read from the kernel back into statements.
func decodeRule(f nft.Family, exprs []expr.Any, ud []byte) nft.Rule {
	var r nft.Rule
	for len(exprs) > 0 {
		s, n := decodeStmt(f, exprs)
		if n == 0 {
			r.Stmts = append(r.Stmts, foreign(exprs))
			break
		}
		r.Stmts = append(r.Stmts, s)
		exprs = exprs[n:]
	}
	if c, ok := userdata.GetString(ud, userdata.TypeComment); ok {
		r.Comment = c
	}
	return r
}

// decoders are tried in order at each position; each returns how many
// expressions it consumed, 0 for no match.
var decoders = []func(nft.Family, []expr.Any) (nft.Stmt, int){
	decodeVerdict, decodeSimple, decodeCtNew, decodeMark, decodeRandom,
	decodeDNAT, decodeProto, decodePort, decodeAddr, decodeFibLocal, decodeUpdateSet, decodeInSetWith, decodeLookup,
}

func decodeStmt(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	for _, d := range decoders {
		if s, n := d(f, ex); n > 0 {
			return s, n
		}
	}
	return nil, 0
}

var verdictsByKind = map[expr.VerdictKind]nft.VerdictKind{
	expr.VerdictJump: nft.Jump, expr.VerdictGoto: nft.Goto, expr.VerdictReturn: nft.Return,
	expr.VerdictAccept: nft.Accept, expr.VerdictDrop: nft.Drop,
}

func decodeVerdict(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if v, ok := ex[0].(*expr.Verdict); ok {
		if kind, ok := verdictsByKind[v.Kind]; ok {
			return nft.Verdict{Kind: kind, Chain: v.Chain}, 1
		}
	}
	return nil, 0
}

func decodeSimple(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	switch e := ex[0].(type) {
	case *expr.Masq:
		if e.FullyRandom && !e.Random && !e.Persistent && !e.ToPorts {
			return nft.Masquerade{}, 1
		}
	case *expr.Reject:
		if *e == *encodeReject(f) {
			return nft.Reject{}, 1
		}
	}
	return nil, 0
}

func decodeCtNew(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 3 {
		return nil, 0
	}
	ct, ok1 := ex[0].(*expr.Ct)
	bw, ok2 := ex[1].(*expr.Bitwise)
	cmp, ok3 := ex[2].(*expr.Cmp)
	if ok1 && ok2 && ok3 && ct.Key == expr.CtKeySTATE && !ct.SourceRegister &&
		isMask(bw, expr.CtStateBitNEW) && cmp.Op == expr.CmpOpNeq && isNative(cmp.Data, 0) {
		return nft.MatchNew{}, 3
	}
	return nil, 0
}

// decodeMark reads "meta mark & bits == 0" and "meta mark set meta mark op bits".
func decodeMark(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 3 {
		return nil, 0
	}
	load, ok1 := ex[0].(*expr.Meta)
	bw, ok2 := ex[1].(*expr.Bitwise)
	if !ok1 || !ok2 || load.Key != expr.MetaKeyMARK || load.SourceRegister || bw.Len != 4 {
		return nil, 0
	}
	mask, xor := native(bw.Mask), native(bw.Xor)
	switch e := ex[2].(type) {
	case *expr.Cmp:
		if xor == 0 && e.Op == expr.CmpOpEq && isNative(e.Data, 0) {
			return nft.MatchMarkClear{Bits: mask}, 3
		}
	case *expr.Meta:
		if e.Key == expr.MetaKeyMARK && e.SourceRegister && mask == ^xor {
			return nft.SetMark{Op: nft.MarkOr, Bits: xor}, 3
		}
		if e.Key == expr.MetaKeyMARK && e.SourceRegister && mask == 0xffffffff {
			return nft.SetMark{Op: nft.MarkXor, Bits: xor}, 3
		}
	}
	return nil, 0
}

func decodeRandom(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	ng, ok := ex[0].(*expr.Numgen)
	if !ok || ng.Type != unix.NFT_NG_RANDOM || ng.Offset != 0 || len(ex) < 2 {
		return nil, 0
	}
	if cmp, ok := ex[1].(*expr.Cmp); ok && cmp.Op == expr.CmpOpEq && isNative(cmp.Data, 0) {
		return nft.Random{Mod: ng.Modulus, Below: 1}, 2
	}
	// The byteorder expression between numgen and cmp is not decoded by
	// google/nftables: rules read back go from numgen straight to cmp lt.
	n := 1
	if bo, ok := ex[1].(*expr.Byteorder); ok && bo.Op == expr.ByteorderHton && bo.Size == 4 {
		n = 2
	}
	if len(ex) <= n {
		return nil, 0
	}
	if cmp, ok := ex[n].(*expr.Cmp); ok && cmp.Op == expr.CmpOpLt && len(cmp.Data) == 4 {
		return nft.Random{Mod: ng.Modulus, Below: binaryutil.BigEndian.Uint32(cmp.Data)}, n + 1
	}
	return nil, 0
}

func isMask(bw *expr.Bitwise, bits uint32) bool {
	return bw.Len == 4 && native(bw.Mask) == bits && native(bw.Xor) == 0
}

func native(b []byte) uint32 {
	if len(b) != 4 {
		return 0xdeadbeef // never a value we write
	}
	return binaryutil.NativeEndian.Uint32(b)
}

func isNative(b []byte, v uint32) bool { return len(b) == 4 && native(b) == v }

// foreign describes expressions the decoder does not recognise.
func foreign(exprs []expr.Any) nft.Foreign {
	parts := make([]string, len(exprs))
	for i, e := range exprs {
		parts[i] = fmt.Sprintf("%T%+v", e, e)
	}
	return nft.Foreign{Desc: strings.Join(parts, " ")}
}
