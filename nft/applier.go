package nft

import "fmt"

// Applier commits plans: all of a plan's operations or none of them.
type Applier interface {
	Apply(p *Plan) error
}

// Reader reads back the tables nftproxy owns, as they are now.
type Reader interface {
	Read() (Ruleset, error)
}

// OpError is a rejected transaction, naming the operation that failed. The
// kernel's state is unchanged.
type OpError struct {
	Index int // position of the failing operation in the plan, -1 if unknown
	Op    Op
	Err   error
}

func (e *OpError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("transaction rejected: %v", e.Err)
	}
	return fmt.Sprintf("operation %d (%s): %v", e.Index, e.Op, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }
