package kernel

import (
	"fmt"
	"strings"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"

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
	if c, ok := udataString(ud, userdata.TypeComment); ok { // anybody may write it
		r.Comment = c
	}
	return r
}

// decoders are tried in order at each position; each returns how many
// expressions it consumed, 0 for no match.
var decoders = []func(nft.Family, []expr.Any) (nft.Stmt, int){
	decodeVerdict, decodeSimple, decodeCtState, decodeMark, decodeRandom,
	decodeDNAT, decodeProto, decodePort, decodeAddr, decodeFibLocal, decodeUpdateSet, decodeLookup, decodeCountInto,
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
	v, ok := ex[0].(*expr.Verdict)
	if !ok {
		return nil, 0
	}
	kind, ok := verdictsByKind[v.Kind]
	branches := kind == nft.Jump || kind == nft.Goto
	if !ok || branches != (v.Chain != "") {
		return nil, 0
	}
	return nft.Verdict{Kind: kind, Chain: v.Chain}, 1
}

func decodeSimple(f nft.Family, ex []expr.Any) (nft.Stmt, int) {
	switch e := ex[0].(type) {
	case *expr.Masq:
		if *e == (expr.Masq{FullyRandom: true}) {
			return nft.Masquerade{}, 1
		}
	case *expr.Reject:
		if *e == *encodeReject(f) {
			return nft.Reject{}, 1
		}
	}
	return nil, 0
}

// decodeCtState reads "ct state new" and "ct state invalid".
func decodeCtState(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 3 {
		return nil, 0
	}
	ct, ok1 := ex[0].(*expr.Ct)
	bw, ok2 := ex[1].(*expr.Bitwise)
	cmp, ok3 := ex[2].(*expr.Cmp)
	if !ok1 || !ok2 || !ok3 || *ct != (expr.Ct{Register: reg1, Key: expr.CtKeySTATE}) ||
		!isCmp(cmp, expr.CmpOpNeq, 4) || native(cmp.Data) != 0 {
		return nil, 0
	}
	switch {
	case isMask(bw, expr.CtStateBitNEW):
		return nft.MatchNew{}, 3
	case isMask(bw, expr.CtStateBitINVALID):
		return nft.MatchInvalid{}, 3
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
	if !ok1 || !ok2 || *load != *loadMark() || !isReg1Bitwise(bw, 4) {
		return nil, 0
	}
	mask, xor := native(bw.Mask), native(bw.Xor)
	switch e := ex[2].(type) {
	case *expr.Cmp:
		if xor == 0 && isCmp(e, expr.CmpOpEq, 4) && native(e.Data) == 0 {
			return nft.MatchMarkClear{Bits: mask}, 3
		}
	case *expr.Meta:
		if *e != *storeMark() {
			return nil, 0
		}
		if mask == ^xor {
			return nft.SetMark{Op: nft.MarkOr, Bits: xor}, 3
		}
		if mask == 0xffffffff {
			return nft.SetMark{Op: nft.MarkXor, Bits: xor}, 3
		}
	}
	return nil, 0
}

// decodeRandom reads the two encodings encodeRandom writes: numgen and
// "== 0" for Below 1, numgen, byteorder and "<" otherwise.
func decodeRandom(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	ng, ok := ex[0].(*expr.Numgen)
	if !ok || len(ex) < 2 || *ng != *numgenRandom(ng.Modulus) {
		return nil, 0
	}
	if cmp, ok := ex[1].(*expr.Cmp); ok && isCmp(cmp, expr.CmpOpEq, 4) && native(cmp.Data) == 0 {
		return nft.Random{Mod: ng.Modulus, Below: 1}, 2
	}
	if len(ex) < 3 {
		return nil, 0
	}
	bo, ok1 := ex[1].(*expr.Byteorder)
	cmp, ok2 := ex[2].(*expr.Cmp)
	if !ok1 || !ok2 || *bo != *hostToNetwork32() || !isCmp(cmp, expr.CmpOpLt, 4) {
		return nil, 0
	}
	below := binaryutil.BigEndian.Uint32(cmp.Data)
	if below == 1 { // written as "== 0"
		return nil, 0
	}
	return nft.Random{Mod: ng.Modulus, Below: below}, 3
}

// isCmp reports whether cmp compares reg 1 by op with n bytes.
func isCmp(cmp *expr.Cmp, op expr.CmpOp, n int) bool {
	return cmp.Op == op && cmp.Register == reg1 && len(cmp.Data) == n
}

// isReg1Bitwise reports whether bw works on n bytes of reg 1, in place.
func isReg1Bitwise(bw *expr.Bitwise, n uint32) bool {
	return bw.SourceRegister == reg1 && bw.DestRegister == reg1 && bw.Len == n &&
		len(bw.Mask) == int(n) && len(bw.Xor) == int(n)
}

func isMask(bw *expr.Bitwise, bits uint32) bool {
	return isReg1Bitwise(bw, 4) && native(bw.Mask) == bits && native(bw.Xor) == 0
}

// native reads 4 bytes in host order; callers check the length first.
func native(b []byte) uint32 { return binaryutil.NativeEndian.Uint32(b) }

// foreign describes expressions the decoder does not recognise.
func foreign(exprs []expr.Any) nft.Foreign {
	parts := make([]string, len(exprs))
	for i, e := range exprs {
		parts[i] = fmt.Sprintf("%T%+v", e, e)
	}
	return nft.Foreign{Desc: strings.Join(parts, " ")}
}
