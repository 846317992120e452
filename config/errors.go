package config

import (
	"fmt"
	"strings"
)

// FieldError is one problem with one configuration field.
//
// We use our own type rather than k8s.io/apimachinery's field.ErrorList: its
// messages are fixed to "path: Invalid value: <value>: detail" with a wording
// per error type, and a field.ErrorList is not itself an error (it needs an
// aggregate whose message is "[a, b]"). Here the message is exactly
// "path: detail", which is what operators read in the log.
type FieldError struct {
	// Path names the field as it is spelled in the file, e.g.
	// "nodePortAddresses[1]" or "clientConnection.qps".
	Path string
	// Detail says what is wrong, e.g. `invalid CIDR "x"`.
	Detail string
}

func (e FieldError) Error() string { return e.Path + ": " + e.Detail }

// ErrorList is every problem found in a configuration, in field order.
type ErrorList []FieldError

var _ error = ErrorList(nil)

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap lets errors.As find a single FieldError in the list.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// add appends one problem; format and args build the detail.
func (l *ErrorList) add(path, format string, args ...any) {
	*l = append(*l, FieldError{Path: path, Detail: fmt.Sprintf(format, args...)})
}

// orNil returns nil for an empty list, so that callers never get a non-nil
// error interface that holds an empty list.
func (l ErrorList) orNil() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
