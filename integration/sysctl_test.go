//go:build integration

package integration

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/proxy/conntrack"
)

// TestConntrackTimeouts sets the conntrack TCP timeouts inside a lab
// namespace with the real /proc/sys (they are per network namespace), checks
// them from a process in that namespace, checks that an unchanged value is
// not written again, and that the host's values did not move.
func TestConntrackTimeouts(t *testing.T) {
	ns := lab.NewNS(t, "sysctl") // skips unless root
	const (
		est = "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established"
		cw  = "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close_wait"
	)
	hostEst, hostCW := readHostSysctl(t, est), readHostSysctl(t, cw)
	// Values that differ from both the namespace's and the host's, so a
	// write to the wrong namespace, or no write, shows.
	wantEst := otherSeconds(7777, hostEst, nsSysctl(t, ns, est))
	wantCW := otherSeconds(4321, hostCW, nsSysctl(t, ns, cw))
	timeouts := conntrack.Timeouts{TCPEstablished: time.Duration(wantEst) * time.Second, TCPCloseWait: time.Duration(wantCW) * time.Second}

	var written []string
	var errs []error
	set := func() error {
		written, errs = conntrack.SetTimeouts(conntrack.SysctlRoot, timeouts)
		return nil
	}
	if err := ns.Do(set); err != nil {
		t.Fatal(err)
	}
	if len(errs) != 0 {
		t.Fatalf("SetTimeouts: %v", errs)
	}
	want := []string{"net.netfilter.nf_conntrack_tcp_timeout_established", "net.netfilter.nf_conntrack_tcp_timeout_close_wait"}
	if diff := cmp.Diff(want, written); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	if got := nsSysctl(t, ns, est); got != strconv.Itoa(wantEst) {
		t.Errorf("established in namespace = %s, want %d", got, wantEst)
	}
	if got := nsSysctl(t, ns, cw); got != strconv.Itoa(wantCW) {
		t.Errorf("close_wait in namespace = %s, want %d", got, wantCW)
	}

	if err := ns.Do(set); err != nil {
		t.Fatal(err)
	}
	if len(written) != 0 || len(errs) != 0 {
		t.Errorf("second call: written %v, errors %v; want neither", written, errs)
	}

	if got := readHostSysctl(t, est); got != hostEst {
		t.Fatalf("host established changed from %s to %s", hostEst, got)
	}
	if got := readHostSysctl(t, cw); got != hostCW {
		t.Fatalf("host close_wait changed from %s to %s", hostCW, got)
	}
}

// readHostSysctl reads path from the test goroutine's namespace (the host's).
func readHostSysctl(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no conntrack sysctls (nf_conntrack not loaded?): %v", err)
	}
	return strings.TrimSpace(string(b))
}

// nsSysctl reads path from a process inside ns.
func nsSysctl(t *testing.T, ns *lab.NS, path string) string {
	t.Helper()
	return strings.TrimSpace(ns.MustExec(t, "cat", path))
}

// otherSeconds returns n, or the first number after it that is none of avoid.
func otherSeconds(n int, avoid ...string) int {
	for slices.Contains(avoid, strconv.Itoa(n)) {
		n++
	}
	return n
}
