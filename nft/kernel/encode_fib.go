package kernel

import (
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// rtnLocal is the route type of the node's own addresses (RTN_LOCAL).
const rtnLocal = unix.RTN_LOCAL

func encodeFibLocal() []expr.Any {
	return []expr.Any{fibSaddrType(), cmpEq(reg1, native32(rtnLocal))}
}

// fibSaddrType looks up the route type of the packet's source address.
func fibSaddrType() *expr.Fib {
	return &expr.Fib{Register: reg1, FlagSADDR: true, ResultADDRTYPE: true}
}
