package main

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// tb lets the demo reuse the test harness (packages lab, apiserver, e2e),
// which takes a testing.TB, from a program: cleanups are collected and run
// by cleanup, Fatal and Skip panic with a fatal that main recovers.
// Embedding the interface provides testing.TB's unexported method; every
// method the harness calls is defined here.
type tb struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

// fatal is the panic value of Fatal and Skip.
type fatal struct{ msg string }

func (t *tb) Helper()        {}
func (t *tb) Name() string   { return "demo" }
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
