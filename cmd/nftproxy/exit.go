package main

import (
	"errors"
	"fmt"
)

// Exit codes (documented in docs/trace.md for `nftproxy trace`; the other
// commands exit 1 on any error).
const (
	exitFailed   = 1 // the command could not do its job (no permission, API server unreachable, ...)
	exitBadInput = 2 // a flag or argument is wrong; the message names it
	exitMismatch = 3 // trace --service: the kernel does not do what the manifests or API server say
)

// exitError carries the exit code an error should end the process with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput marks err as a fault of the command line.
func badInput(err error) error { return &exitError{exitBadInput, err} }

// badFlag is a bad value of flag.
func badFlag(flag, format string, args ...any) error {
	return badInput(fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
}

// exitCode is the exit code for err: exitFailed unless it says otherwise.
func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return exitFailed
}
