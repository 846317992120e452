package kernel

import (
	"github.com/google/nftables/expr"

	"github.com/nftproxy/nftproxy/nft"
)

func decodeFibLocal(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	if len(ex) < 2 {
		return nil, 0
	}
	fib, ok1 := ex[0].(*expr.Fib)
	cmp, ok2 := ex[1].(*expr.Cmp)
	if ok1 && ok2 && *fib == *fibSaddrType() && isCmp(cmp, expr.CmpOpEq, 4) && native(cmp.Data) == rtnLocal {
		return nft.MatchFibLocal{}, 2
	}
	return nil, 0
}
