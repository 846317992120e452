//go:build integration

package agentfailure

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
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
// the agent in ns; labels are matched as the exposition writes them
// (`name{label="value"}`).
func scrape(ns *lab.NS, name string) (float64, error) {
	client := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: ns.DialContext}}
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
