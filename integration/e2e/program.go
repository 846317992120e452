package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
)

// Main runs fn as a command rather than a test (make demo, measurements),
// with a testing.TB so that it can use this package, apiserver and lab.
// Fatal and Skip end fn with an error; cleanups run when fn returns or
// fails, and on SIGINT or SIGTERM (Ctrl-C), last registered first. Main
// returns the exit code: 0 when fn returned without failing.
func Main(fn func(t testing.TB)) int {
	t := &tb{}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- t.run(fn) }()
	var err error
	select {
	case err = <-done:
	case sig := <-interrupted:
		err = fmt.Errorf("interrupted (%v)", sig)
	}
	fmt.Fprintln(os.Stderr, "cleaning up")
	t.cleanup()
	if err == nil && t.Failed() {
		err = errors.New("a check failed (see above)")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}

// run calls fn and turns a Fatal, Skip or panic into an error.
func (t *tb) run(fn func(t testing.TB)) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case fatal:
			err = fmt.Errorf("%s", r.msg)
		default: // a bug; still clean up before reporting it
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	fn(t)
	return nil
}

// tb is the testing.TB of Main: cleanups are collected and run by cleanup,
// Fatal and Skip panic with a fatal that run recovers. Embedding the
// interface provides testing.TB's unexported method; every method the
// harness calls is defined here (others would panic, and Main reports it).
type tb struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

// fatal is the panic value of Fatal and Skip.
type fatal struct{ msg string }

func (t *tb) Helper()        {}
func (t *tb) Name() string   { return "command" }
func (t *tb) Failed() bool   { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }
func (t *tb) Log(a ...any)   { fmt.Fprintln(os.Stderr, a...) }
func (t *tb) Fatal(a ...any) { t.fail(fmt.Sprint(a...)) }
func (t *tb) Skip(a ...any)  { t.fail(fmt.Sprint(a...)) }

func (t *tb) Logf(format string, a ...any)   { fmt.Fprintf(os.Stderr, format+"\n", a...) }
func (t *tb) Fatalf(format string, a ...any) { t.fail(fmt.Sprintf(format, a...)) }
func (t *tb) Skipf(format string, a ...any)  { t.fail(fmt.Sprintf(format, a...)) }

func (t *tb) Errorf(format string, a ...any) {
	t.Logf(format, a...)
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *tb) fail(msg string) {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	panic(fatal{msg})
}

func (t *tb) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *tb) TempDir() string {
	dir, err := os.MkdirTemp("", "nftproxy-demo-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// cleanup runs the cleanups, last registered first, once each.
func (t *tb) cleanup() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		f()
	}
}
