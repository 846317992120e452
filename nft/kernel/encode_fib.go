package kernel

import (
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// rtnLocal is the route type of the node's own addresses (RTN_LOCAL).
const rtnLocal = unix.RTN_LOCAL

func encodeFibLocal() []expr.Any {
	return []expr.Any{&expr.Fib{Register: reg1, FlagSADDR: true, ResultADDRTYPE: true}, cmpEq(reg1, native32(rtnLocal))}
}
