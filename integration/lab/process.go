package lab

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stopTimeout bounds a graceful stop before the process is killed.
const stopTimeout = 10 * time.Second

// logTail is how many lines of a log a failed test prints.
const logTail = 30

// Process is a long-running program inside a namespace, started by
// NS.StartLogged, its output in a file.
type Process struct {
	Name    string
	Log     string // the path of its combined output
	Cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	err     error         // the exit status, once done is closed
	stopped atomic.Bool   // Stop was called
}

// StartLogged runs args inside ns with "ip netns exec", its output to the
// file log, and registers a cleanup that stops it and, when the test failed,
// prints the tail of its log. "ip netns exec" execs the program, so
// Cmd.Process is the program itself and signals reach it.
func (ns *NS) StartLogged(t testing.TB, name, log string, args ...string) *Process {
	t.Helper()
	out, err := os.Create(log)
	if err != nil {
		t.Fatalf("%s: create log: %v", name, err)
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		t.Fatalf("%s: start: %v", name, err)
	}
	p := &Process{Name: name, Log: log, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("last lines of %s (%s):\n%s", name, log, p.Tail())
		}
	})
	return p
}

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM and, after stopTimeout, SIGKILL, waits for the exit
// and returns its status. It is safe to call more than once.
func (p *Process) Stop() error {
	p.stopped.Store(true)
	_ = p.Cmd.Process.Signal(syscall.SIGTERM) // by its own pid; it may have exited
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
	return p.err
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stopped reports whether Stop was called: an exit after it is expected.
func (p *Process) Stopped() bool { return p.stopped.Load() }

// Wait waits at most timeout for the process to exit and returns its
// status; an error wrapping os.ErrDeadlineExceeded when it did not exit.
func (p *Process) Wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("%s still running after %v: %w", p.Name, timeout, os.ErrDeadlineExceeded)
	}
}

// Tail returns the last lines of the log.
func (p *Process) Tail() string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > logTail {
		lines = lines[len(lines)-logTail:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Failure describes a process that exited when it should not have, with
// the tail of its log, for t.Fatal.
func (p *Process) Failure() error {
	_, err := p.Exited()
	if err == nil {
		err = errors.New("exited with status 0")
	}
	return fmt.Errorf("%s exited: %w\n%s", p.Name, err, strings.TrimSpace(p.Tail()))
}
