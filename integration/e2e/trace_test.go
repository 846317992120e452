//go:build integration

package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

// TestTraceAgainstTheAPI: `nftproxy trace --service --kubeconfig` in the
// node's namespace names each endpoint's node from the API server and
// finds the kernel's tables doing what the API server's objects say; once
// the proxy is stopped and the API moves on, it reports the difference and
// exits 3.
func TestTraceAgainstTheAPI(t *testing.T) {
	env := e2e.New(t, 2)
	proxy := env.StartProxy(t)
	b := env.Lab.Backends
	env.Create(t, e2e.Service("web", "10.96.3.10", e2e.TCPPort("http", 80, 30310)))
	env.Create(t, e2e.Slice("web", "http", b[0].IPv4))
	e2e.Eventually(t, "ClusterIP answered by pod 0", env.AnsweredBy("10.96.3.10:80", 5, b[0].Name))
	cfg := writeConfig(t)

	out, code := traceIn(t, env, "--service", "e2e/web", "--kubeconfig", env.API.Kubeconfig, "--node-name", e2e.NodeName,
		"--config", cfg, "-o", "json")
	var rep explain.ServiceReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if c := rep.Comparison; c == nil || !c.Matches || c.Against != "api-server" {
		t.Fatalf("comparison %+v, want a match with the API server", c)
	}
	ep := rep.Entries[0].Traces[0].Outcomes[0].Endpoint
	if ep == nil || ep.Node != e2e.NodeName || !ep.Local || strings.Join(ep.Conditions, ",") != "ready,serving" {
		t.Errorf("endpoint %+v, want on node-1, this node, ready", ep)
	}

	if err := proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	env.Update(t, e2e.Slice("web", "http", b[1].IPv4))
	out, code = traceIn(t, env, "--service", "e2e/web", "--kubeconfig", env.API.Kubeconfig, "--node-name", e2e.NodeName, "--config", cfg)
	t.Logf("after the proxy stopped and the EndpointSlice moved to pod 1:\n%s", out)
	if code != 3 || !strings.Contains(out, "this table: 1 accept "+lab.AddrPort(b[0].IPv4, e2e.BackendPort)) ||
		!strings.Contains(out, "what the API server's objects say: 1 accept "+lab.AddrPort(b[1].IPv4, e2e.BackendPort)) {
		t.Errorf("exit %d, want 3 and the difference", code)
	}
}

// writeConfig writes the cluster CIDRs the proxy runs with as a
// configuration file, so that trace compiles the API's objects alike.
func writeConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	text := "apiVersion: nftproxy.io/v1alpha1\nkind: ProxyConfiguration\nclusterCIDR: " +
		lab.ClusterCIDRv4.String() + "," + lab.ClusterCIDRv6.String() + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// traceIn runs `nftproxy trace ARGS` in the node's namespace and returns
// its output and exit code.
func traceIn(t *testing.T, env *e2e.Env, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", env.Lab.Node.Name, lab.Nftproxy(t), "trace"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return string(out), code
}
