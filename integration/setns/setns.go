// Package setns makes network namespaces and runs code inside them: the
// one place that creates and removes them (netns.go) and that calls
// setns(2), for the test lab (integration/lab) and the benchmarks
// (cmd/bench). Rules never need it (netlink sockets are opened in a
// namespace by descriptor); sockets that serve or send test traffic do.
package setns

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Do runs fn on a fresh goroutine whose OS thread is switched into the
// namespace bound at path (e.g. /run/netns/NAME), and returns fn's error.
// Sockets fn creates belong to the namespace for their whole life and can
// be used from any goroutine afterwards. Goroutines that fn starts do not
// run in the namespace.
func Do(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- doLocked(path, fn) }()
	return <-errc
}

// doLocked switches the locked thread into the namespace and back. If it
// cannot switch back, it leaves the thread locked: the goroutine then exits
// locked and the Go runtime terminates the thread instead of reusing it in
// the wrong namespace.
func doLocked(path string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open current namespace: %w", err)
	}
	defer unix.Close(orig)
	target, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open namespace %s: %w", path, err)
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter namespace %s: %w", path, err)
	}
	fnErr := fn()
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		return errors.Join(fnErr, fmt.Errorf("restore namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return fnErr
}
