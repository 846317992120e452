package kernel

import (
	"github.com/google/nftables/expr"

	"github.com/nftproxy/nftproxy/nft"
)

func decodeFibLocal(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	fib, ok := ex[0].(*expr.Fib)
	if !ok || len(ex) < 2 {
		return nil, 0
	}
	cmp, ok := ex[1].(*expr.Cmp)
	want := expr.Fib{Register: fib.Register, FlagSADDR: true, ResultADDRTYPE: true}
	if ok && *fib == want && cmp.Op == expr.CmpOpEq && cmp.Register == fib.Register && isNative(cmp.Data, rtnLocal) {
		return nft.MatchFibLocal{}, 2
	}
	return nil, 0
}
