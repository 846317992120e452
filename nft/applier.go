package nft

import (
	"errors"
	"fmt"
)

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

// ConflictError is a plan refused because the ruleset is no longer at the
// generation the plan was made from (Plan.Gen): somebody else committed in
// between. Nothing of the plan was applied. The remedy is to read the
// tables again and make a new plan, never to resend this one.
type ConflictError struct {
	Gen uint32 // the generation the plan was made from
	Err error  // the kernel's errno (ERESTART); nil from the Fake
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("ruleset changed after generation %d, which the plan was made from", e.Gen)
}

func (e *ConflictError) Unwrap() error { return e.Err }

// IsConflict reports whether err is, or wraps, a *ConflictError.
func IsConflict(err error) bool {
	var c *ConflictError
	return errors.As(err, &c)
}

// NextGeneration is the generation that follows gen: the one a transaction
// committed at gen produces. The kernel's counter skips 0 when it wraps.
func NextGeneration(gen uint32) uint32 {
	if gen++; gen == 0 {
		return 1
	}
	return gen
}
