package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/proxy/explain"
)

// examples is the repository's examples/ directory.
func examples(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples")
}

// runTraceArgs runs `nftproxy trace ARGS` as main does, and returns its
// output, its error output and the exit code main would end with.
func runTraceArgs(args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	err := dispatch(append([]string{"trace"}, args...), &stdout, &stderr)
	if err != nil {
		stderr.WriteString("nftproxy: " + err.Error() + "\n")
		return stdout.String(), stderr.String(), exitCode(err)
	}
	return stdout.String(), stderr.String(), 0
}

// TestTraceBadInput: every bad flag is one line naming the flag, exit 2,
// before anything is read.
func TestTraceBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--src", "10.0.0.1"}, "--dst: missing"},
		{[]string{"--dst", "10.96.0.10"}, "--dst: \"10.96.0.10\": want IP:PORT"},
		{[]string{"--dst", "10.96.0.10:65536"}, "--dst: \"10.96.0.10:65536\": want IP:PORT ([IPv6]:PORT) with a port from 1 to 65535"},
		{[]string{"--dst", "10.96.0.10:0"}, "--dst: \"10.96.0.10:0\": port 0 is no Service port"},
		{[]string{"--dst", "10.96.0.10:80", "--src", "10.0.0.300"}, "--src: \"10.0.0.300\": want IP or IP:PORT"},
		{[]string{"--dst", "10.96.0.10:80", "--src", "10.0.0.1:99999"}, "--src: \"10.0.0.1:99999\": port out of range"},
		{[]string{"--dst", "10.96.0.10:80", "--proto", "icmp"}, "--proto: want tcp, udp or sctp, got \"icmp\""},
		{[]string{"--dst", "10.96.0.10:80", "--from", "moon"}, "--from: want external, pod or node, got \"moon\""},
		{[]string{"--dst", "10.96.0.10:80", "-o", "yaml"}, "--output: want text or json, got \"yaml\""},
		{[]string{"--service", "demo"}, "--service: \"demo\": want NAMESPACE/NAME"},
		{[]string{"--service", "demo/web", "--dst", "10.96.0.10:80"}, "--service: traces every entry point"},
		{[]string{"--service", "demo/web", "--proto", "udp"}, "leave out --dst, --src, --from and --proto"},
		{[]string{"--dst", "10.96.0.10:80", "--kernel"}, "--kernel: only with -f"},
		{[]string{"--dst", "10.96.0.10:80", "-f", "x", "--kubeconfig", "k"}, "--filename: -f and --kubeconfig/--in-cluster"},
		{[]string{"--dst", "10.96.0.10:80", "--bogus"}, "trace: unknown flag: --bogus"},
		{[]string{"--dst", "10.96.0.10:80", "extra"}, "trace: unexpected argument \"extra\""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := runTraceArgs(tc.args...)
			if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tc.want)
			}
		})
	}
}

// TestTraceRequestAgainstTable: what only the table can refuse names the
// flag too: a family without a table, a source of the other family.
func TestTraceRequestAgainstTable(t *testing.T) {
	ex := examples(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", ex, "--src", "2001:db8::1", "--dst", "[2001:db8::99]:80", "--node-name", "node-1"},
			""},
		{[]string{"-f", ex, "--src", "fd00::1", "--dst", "10.96.0.10:80"}, "--src: fd00::1 is not an IPv4 address, as --dst 10.96.0.10:80 is"},
		{[]string{"-f", ex, "--from", "node", "--src", "10.0.0.1", "--dst", "10.96.0.10:80"}, "--from: 10.0.0.1 is not an address of this node"},
		{[]string{"-f", ipv4Only(t), "--src", "fd00::1", "--dst", "[fd00::10]:80"},
			"--dst: fd00::10: the manifests compile to no table ip6 kube-proxy"},
	} {
		t.Run(strings.Join(tc.args[2:], " "), func(t *testing.T) {
			_, stderr, code := runTraceArgs(tc.args...)
			if tc.want == "" {
				if code != 0 {
					t.Errorf("exit %d: %s", code, stderr)
				}
				return
			}
			if code != exitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// ipv4Only writes manifests with nothing of IPv6: a Node and a Service.
func ipv4Only(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v4.yaml")
	err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  addresses: [{type: InternalIP, address: 198.51.100.1}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  clusterIP: 10.96.0.10
  clusterIPs: [10.96.0.10]
  ports: [{name: http, protocol: TCP, port: 80}]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTraceManifests: with -f, without root, the text names the Service,
// the endpoints' nodes and the reason; -o json is the same report.
func TestTraceManifests(t *testing.T) {
	ex := examples(t)
	out, stderr, code := runTraceArgs("-f", ex, "--src", "198.51.100.7", "--dst", "10.96.0.50:80")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"table:   ip kube-proxy, compiled from the manifests", "service: demo/pending, port http, by its ClusterIP",
		"REJECT: no endpoints: demo/pending:http (ClusterIP) has no ready endpoint"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runTraceArgs("-f", ex, "--from", "pod", "--dst", "10.96.0.10:80", "-o", "json")
	var rep explain.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, json: %v\n%s", code, err, out)
	}
	if rep.Schema != explain.Schema || rep.From.Origin != "pod" || len(rep.Outcomes) != 2 || rep.Outcomes[0].Endpoint == nil ||
		rep.Outcomes[0].Endpoint.Node != "node-1" || !rep.Outcomes[0].Endpoint.Local {
		t.Errorf("report %+v", rep)
	}
}

// TestTraceServiceManifests: --service with -f traces every entry; a
// Service the manifests do not have is a note, exit 0.
func TestTraceServiceManifests(t *testing.T) {
	ex := examples(t)
	out, stderr, code := runTraceArgs("-f", ex, "--service", "demo/api", "-o", "json")
	var rep explain.ServiceReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, stderr)
	}
	var entries []string
	for _, e := range rep.Entries {
		entries = append(entries, e.Entry+" "+e.Destination)
	}
	want := "ClusterIP 10.96.0.30:443, externalIP 192.0.2.50:443, load-balancer IP 203.0.113.10:443, NodePort 198.51.100.1:30443"
	if got := strings.Join(entries, ", "); got != want || rep.Comparison != nil {
		t.Errorf("entries %s (comparison %v); want %s and none", got, rep.Comparison, want)
	}
	out, _, code = runTraceArgs("-f", ex, "--service", "demo/nothing")
	if code != 0 || !strings.Contains(out, "no entry of demo/nothing in the tables") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
