//go:build integration

package lab

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/setns"
)

// TestDo checks that Do runs inside the namespace and leaves the caller's
// namespace alone.
func TestDo(t *testing.T) {
	ns := NewNS(t, "do")
	hostIno := inode(t, "/proc/thread-self/ns/net")
	var inside uint64
	var confs []string
	err := ns.Do(func() error {
		inside = inode(t, "/proc/thread-self/ns/net")
		entries, err := os.ReadDir("/proc/sys/net/ipv4/conf")
		for _, e := range entries {
			confs = append(confs, e.Name())
		}
		return err
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if want := inode(t, ns.Path()); inside != want {
		t.Errorf("Do ran in namespace inode %d, want %d", inside, want)
	}
	if want := []string{"all", "default", "lo"}; !slices.Equal(confs, want) {
		t.Errorf("/proc/sys/net/ipv4/conf inside Do = %v, want %v", confs, want)
	}
	if got := inode(t, "/proc/thread-self/ns/net"); got != hostIno {
		t.Errorf("caller's namespace changed: inode %d, want %d", got, hostIno)
	}
}

// TestSysctl checks that Sysctl writes the namespace's value, not the host's.
func TestSysctl(t *testing.T) {
	ns := NewNS(t, "sysctl")
	const key, path = "net.ipv4.conf.lo.forwarding", "/proc/sys/net/ipv4/conf/lo/forwarding"
	host := readFile(t, path)
	value := "1"
	if host == "1" {
		value = "0"
	}
	ns.Sysctl(t, key, value)
	if got := strings.TrimSpace(ns.MustExec(t, "cat", path)); got != value {
		t.Errorf("%s inside namespace = %q, want %q", key, got, value)
	}
	if got := readFile(t, path); got != host {
		t.Fatalf("%s on the host changed from %q to %q", key, host, got)
	}
}

// TestCleanup checks that namespaces, servers and their goroutines are gone
// once a test's cleanup has run.
func TestCleanup(t *testing.T) {
	before := runtime.NumGoroutine()
	var names []string
	var pids []int
	var orphan *exec.Cmd
	t.Run("lab", func(t *testing.T) {
		c := NewCluster(t, 2)
		names = append(names, c.Node.Name, c.Client.Name)
		pids = append(pids, c.Node.Start(t, "sleep", "60").Process.Pid)
		// Not started with Start: only the namespace's removal ends it.
		orphan = exec.Command("ip", "netns", "exec", c.Client.Name, "sleep", "60")
		if err := orphan.Start(); err != nil {
			t.Fatal(err)
		}
		for _, b := range c.Backends {
			names = append(names, b.Name)
			for _, p := range []Proto{TCP, UDP} {
				Serve(t, p, b.NS, AddrPort(b.IPv4, 8080), b.Name)
				if _, err := c.Client.Request(p, AddrPort(b.IPv4, 8080), 2*time.Second); err != nil {
					t.Errorf("request: %v", err)
				}
			}
		}
	})
	list, err := setns.Run("ip", "netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(list, n) {
			t.Errorf("namespace %s still listed after cleanup", n)
		}
		if _, err := os.Stat("/run/netns/" + n); !os.IsNotExist(err) {
			t.Errorf("/run/netns/%s still exists after cleanup (stat: %v)", n, err)
		}
	}
	for _, pid := range pids {
		waitProcessGone(t, pid)
	}
	if orphan != nil {
		waitProcessGone(t, orphan.Process.Pid)
		_ = orphan.Wait() // reap it
	}
	waitGoroutines(t, before)
}

// waitProcessGone fails unless pid exits (or is a zombie) within seconds.
func waitProcessGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after cleanup: %s", pid, stat)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGoroutines fails unless the goroutine count drops to want or below
// within a few seconds.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func inode(t testing.TB, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Errorf("stat %s: %v", path, err)
	}
	return st.Ino
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
