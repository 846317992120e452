//go:build integration

package agentfailure

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// metricsAddr is where the agents of these tests serve metrics, on the
// node namespace's loopback.
const metricsAddr = "127.0.0.1:10249"

// startAgent runs nftproxy in env's node namespace with metrics on
// metricsAddr and extra flags.
func startAgent(t *testing.T, env *e2e.Env, extra ...string) *lab.Process {
	t.Helper()
	return env.StartProxy(t, append([]string{"--metrics-bind-address=" + metricsAddr}, extra...)...)
}

// scrape reads one metric (a counter, gauge or a histogram's _count) from
// the agent in ns; labels are not supported.
func scrape(ns *lab.NS, name string) (float64, error) {
	client := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dialIn(ns)}}
	resp, err := client.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	return findMetric(resp.Body, name)
}

func findMetric(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("metric %s not found", name)
}

// dialIn creates each connection on a thread inside ns.
func dialIn(ns *lab.NS) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := ns.Do(func() (err error) {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

// rss returns the resident set size of process pid, in bytes.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// apiServerProcess finds kube-apiserver among the processes of ns and
// returns its pid and command line, to stop it and start it again as it was.
func apiServerProcess(t *testing.T, ns *lab.NS) (int, []string) {
	t.Helper()
	out, err := osexec.Command("ip", "netns", "pids", ns.Name).Output()
	if err != nil {
		t.Fatalf("ip netns pids %s: %v", ns.Name, err)
	}
	for _, f := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(f)
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		// comm is the executable's name cut to 15 bytes.
		if !strings.HasPrefix(strings.TrimSpace(string(comm)), "kube-apiserver") {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			t.Fatal(err)
		}
		return pid, strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	}
	t.Fatalf("no kube-apiserver in namespace %s", ns.Name)
	return 0, nil
}

// killProcess kills pid with SIGKILL, as a crash or a lost machine would
// stop it (a SIGTERM'd kube-apiserver drains its watches for a long
// while), and waits until it is gone.
func killProcess(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		// The harness reaps its own child; until then it is a zombie.
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || zombie(string(st)) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pid %d still there 30 s after SIGKILL", pid)
}

// zombie reads the state field of /proc/PID/stat.
func zombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}
