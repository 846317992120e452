package metrics

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// notExported are the metrics of kube-proxy's nftables mode that nftproxy
// does not export, and why: the only ones allowed to be missing.
var notExported = map[string]string{
	"kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total": "no cleanup transaction: stale chains are deleted " +
		"in the sync's one transaction, whose failure counts in kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
}

// TestKubeProxyMetrics compares our metrics with kube-proxy's list
// (testdata/kube-proxy-metrics.txt, printed by hack/tools/kubernetes/kubeproxy-metrics):
// each of kube-proxy's is ours with the same type, labels and buckets, or
// is in notExported; what we add is named nftproxy_*. It logs the
// difference, one metric a line: "=" the same, "-" kube-proxy's only, "+"
// ours only (hack/metrics-diff.sh prints it).
func TestKubeProxyMetrics(t *testing.T) {
	theirs := readList(t, "testdata/kube-proxy-metrics.txt")
	ours, err := List()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, l := range ours {
		byName[name(l)] = l
	}
	for _, l := range theirs {
		n := name(l)
		switch mine, ok := byName[n]; {
		case ok && mine == l:
			t.Logf("= %s", l)
		case ok:
			t.Errorf("kube-proxy: %s\nnftproxy:   %s", l, mine)
		case notExported[n] != "":
			t.Logf("- %s  (not exported: %s)", l, notExported[n])
		default:
			t.Errorf("kube-proxy's %s is missing", l)
		}
		delete(byName, n)
	}
	for _, l := range ours {
		if _, left := byName[name(l)]; !left {
			continue
		}
		if !strings.HasPrefix(l, "nftproxy_") {
			t.Errorf("%s: not kube-proxy's, and not named nftproxy_*", l)
		}
		t.Logf("+ %s", l)
	}
}

func name(line string) string { n, _, _ := strings.Cut(line, " "); return n }

// readList reads a metrics list, without its comment lines.
func readList(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if l := s.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if err := s.Err(); err != nil || len(out) == 0 {
		t.Fatalf("%s: %d metrics, %v", path, len(out), err)
	}
	return out
}

// TestHandler: /metrics has ours, the process's, and client-go's request
// metrics (after one request to an API server); /healthz answers.
func TestHandler(t *testing.T) {
	m := New()
	m.Repairs.Inc()
	m.NotificationsLost.Add(2)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"APIVersions","versions":["v1"]}`)
	}))
	defer api.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Discovery().RESTClient().Get().AbsPath("/api").DoRaw(t.Context()); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"/metrics", "nftproxy_external_changes_repaired_total 1\n"},
		{"/metrics", "nftproxy_notifications_lost_total 2\n"},
		{"/metrics", "process_resident_memory_bytes "},
		{"/metrics", `rest_client_requests_total{code="200",host="` + strings.TrimPrefix(api.URL, "http://") + `",method="GET"} 1`},
		{"/metrics", "rest_client_request_duration_seconds_bucket{"},
		{"/healthz", "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != 200 || !strings.Contains(string(body), tc.want) {
				t.Errorf("GET %s: %d, body does not contain %q:\n%s", tc.path, rec.Code, tc.want, body)
			}
		})
	}
}
