package lab

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/integration/setns"
)

// Path is the namespace's bind mount, /run/netns/<Name>.
func (ns *NS) Path() string { return filepath.Join("/run/netns", ns.Name) }

// Open opens the namespace, e.g. for nftables.WithNetNSFd(int(f.Fd())). The
// caller must close the file: an open namespace file keeps the namespace
// alive after it is deleted.
func (ns *NS) Open() (*os.File, error) {
	f, err := os.Open(ns.Path())
	if err != nil {
		return nil, fmt.Errorf("open namespace: %w", err)
	}
	return f, nil
}

// FD returns a file descriptor for the namespace that is closed at cleanup,
// before the namespace is removed.
func (ns *NS) FD(t testing.TB) int {
	t.Helper()
	fd, err := unix.Open(ns.Path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open namespace %s: %v", ns.Name, err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	return fd
}

// Do runs fn on an OS thread switched into the namespace (see setns.Do),
// and returns fn's error. fn must not call t.FailNow: it does not run on
// the test goroutine.
func (ns *NS) Do(fn func() error) error { return setns.Do(ns.Path(), fn) }

// Sysctl sets key (dotted, e.g. "net.ipv4.ip_forward") to value inside the
// namespace. /proc/sys/net resolves against the writing thread's namespace,
// so the write happens inside Do.
func (ns *NS) Sysctl(t testing.TB, key, value string) {
	t.Helper()
	path := filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
	err := ns.Do(func() error { return os.WriteFile(path, []byte(value), 0o644) })
	if err != nil {
		t.Fatalf("%s: sysctl %s=%s: %v", ns.Name, key, value, err)
	}
}

// DialContext connects from inside ns: the socket is created on a thread
// switched into ns and stays there for the connection's life. Its signature
// fits net/http's Transport.DialContext and client-go's rest.Config.Dial.
func (ns *NS) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := ns.Do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}
