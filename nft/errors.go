package nft

import (
	"errors"
	"fmt"
	"syscall"
)

// The errors an operation fails with are the kernel's errnos, and the Fake
// fails with the same ones, so that one predicate serves both: IsNotFound,
// IsExists and IsBusy hold for what nft/kernel returns and for what Fake
// returns.
var (
	ErrNotFound = syscall.ENOENT // a table, chain, set or element that is not there
	ErrExists   = syscall.EEXIST // an element already there with another verdict
	ErrBusy     = syscall.EBUSY  // a chain or set that something still refers to
)

// IsNotFound reports whether err is, or wraps, ErrNotFound (ENOENT).
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsExists reports whether err is, or wraps, ErrExists (EEXIST).
func IsExists(err error) bool { return errors.Is(err, ErrExists) }

// IsBusy reports whether err is, or wraps, ErrBusy (EBUSY).
func IsBusy(err error) bool { return errors.Is(err, ErrBusy) }

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
