package lab

import (
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/nftproxy/nftproxy/integration/setns"
)

// NS is a network namespace created by NewNS and removed at test cleanup.
type NS struct {
	// Name is the namespace's name for "ip netns" (/run/netns/<Name>).
	Name string

	mu      sync.Mutex
	nextIf  int // counter for veth names in this namespace
	removed bool
}

// NewNS creates a namespace named prefix plus a random suffix (setns.Add,
// with its loopback up), turns IPv6 duplicate address detection off, and registers a
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
	name, err := setns.Add(prefix)
	if err != nil {
		t.Fatal(err)
	}
	ns := &NS{Name: name}
	t.Cleanup(func() {
		if err := ns.remove(); err != nil {
			t.Errorf("remove namespace %s: %v", ns.Name, err)
		}
	})
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

// Exec runs args inside the namespace with "ip netns exec" and returns the
// combined output.
func (ns *NS) Exec(args ...string) (string, error) {
	return setns.Exec(ns.Name, args...)
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
	if err := setns.Remove(ns.Name); err != nil {
		return err
	}
	ns.removed = true
	return nil
}
