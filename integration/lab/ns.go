package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// execTimeout bounds every command the lab runs, so a stuck tool cannot hang
// a test.
const execTimeout = 30 * time.Second

// NS is a network namespace created by NewNS and removed at test cleanup.
type NS struct {
	// Name is the namespace's name for "ip netns" (/run/netns/<Name>).
	Name string

	mu      sync.Mutex
	nextIf  int // counter for veth names in this namespace
	removed bool
}

// NewNS creates a namespace named prefix plus a random suffix, brings its
// loopback up, turns IPv6 duplicate address detection off, and registers a
// cleanup that kills every process left in it and deletes it. It skips the
// test when not root.
//
// Without DAD, link-local addresses work at once: while a router's
// link-local address is tentative (about two seconds after link up) the
// kernel sends no neighbour solicitation for forwarded packets, and the first
// IPv6 connections through the node time out.
func NewNS(t testing.TB, prefix string) *NS {
	t.Helper()
	requireRoot(t)
	ns := &NS{}
	var err error
	for range 3 { // a clash of random names is unlikely; retry it anyway
		ns.Name = prefix + "-" + randomSuffix()
		if _, err = run("ip", "netns", "add", ns.Name); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		if err := ns.remove(); err != nil {
			t.Errorf("remove namespace %s: %v", ns.Name, err)
		}
	})
	ns.MustExec(t, "ip", "link", "set", "lo", "up")
	ns.Sysctl(t, "net.ipv6.conf.all.accept_dad", "0")
	ns.Sysctl(t, "net.ipv6.conf.default.accept_dad", "0")
	return ns
}

// requireRoot skips the test unless it can create namespaces.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("lab: creating network namespaces needs root; run: sudo go test -tags integration ./integration/...")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("lab: iproute2 (ip) not found in PATH")
	}
}

// randomSuffix returns 6 hex digits: names stay short and unique enough.
func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// Exec runs args inside the namespace with "ip netns exec" and returns the
// combined output.
func (ns *NS) Exec(args ...string) (string, error) {
	return run(append([]string{"ip", "netns", "exec", ns.Name}, args...)...)
}

// MustExec is Exec that fails the test on error.
func (ns *NS) MustExec(t testing.TB, args ...string) string {
	t.Helper()
	out, err := ns.Exec(args...)
	if err != nil {
		t.Fatalf("%s: %v", ns.Name, err)
	}
	return out
}

// Start starts a long-running command inside the namespace; cleanup kills it
// and waits for it. Its output is discarded: use Exec when output matters.
func (ns *NS) Start(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start %q: %v", ns.Name, args, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // by its own pid; it may have exited already
		_ = cmd.Wait()
	})
	return cmd
}

// remove kills the processes left in the namespace and deletes it. It is
// idempotent.
func (ns *NS) remove() error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.removed {
		return nil
	}
	if out, err := run("ip", "netns", "pids", ns.Name); err == nil {
		for _, f := range strings.Fields(out) {
			// Never this process: a thread inside Do on the main thread
			// makes "ip netns pids" list it.
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL) // a process in our own namespace
			}
		}
	}
	if _, err := run("ip", "netns", "del", ns.Name); err != nil {
		return err
	}
	ns.removed = true
	return nil
}

// run runs a command with execTimeout and returns its combined output.
func run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
