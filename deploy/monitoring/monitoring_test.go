package monitoring_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nftproxy/nftproxy/deploy/monitoring"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/metrics"
)

// scrapeMade are the series Prometheus makes itself for every target.
var scrapeMade = []string{"up"}

// served returns the metric families nftproxy's /metrics serves, name to
// type: every metric registered (each labelled one with a child), the drop
// and reject counters read from a table, and client-go's request metrics
// after one request.
func served(t *testing.T) map[string]string {
	t.Helper()
	m := metrics.New()
	m.CountPackets(func(nft.Family) ([]metrics.PacketCount, error) {
		return []metrics.PacketCount{{Name: "drop-source-range"}, {Name: "reject-no-endpoints"}}, nil
	})
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
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := map[string]string{}
	s := bufio.NewScanner(rec.Body)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = f[3]
		}
	}
	// Labelled metrics appear on /metrics once they have a child; List
	// makes one of each.
	list, err := metrics.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		f := strings.Fields(l)
		out[f[0]] = f[1]
	}
	return out
}

// family returns the metric family a series name belongs to: itself, or
// the histogram or summary whose _bucket, _sum or _count it is.
func family(name string, fams map[string]string) (string, bool) {
	if _, ok := fams[name]; ok {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		if typ := fams[base]; typ == "histogram" || (typ == "summary" && suffix != "_bucket") {
			return base, true
		}
	}
	return "", false
}

// TestExpressionsUseServedMetrics fails when an alert rule or a dashboard
// query names a metric that nftproxy's /metrics does not serve: renamed,
// gone, or misspelt.
func TestExpressionsUseServedMetrics(t *testing.T) {
	fams := served(t)
	exprs, err := monitoring.All()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, e := range exprs {
		names, err := monitoring.MetricNames(monitoring.Instantiate(e.Query, "1m"))
		if err != nil {
			t.Errorf("%s: %v", e.Source, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: %q selects no metric", e.Source, e.Query)
		}
		for _, n := range names {
			f, ok := family(n, fams)
			switch {
			case ok:
				used[f] = true
			case slices.Contains(scrapeMade, n):
			default:
				t.Errorf("%s uses %s, which nftproxy does not serve", e.Source, n)
			}
		}
	}
	t.Logf("%d expressions use %d of the %d metric families served", len(exprs), len(used), len(fams))
}

// TestEveryAlertIsDocumented: each alert has a severity, a summary and a
// description, and docs/operations.md says what to do about it.
func TestEveryAlertIsDocumented(t *testing.T) {
	docs, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := monitoring.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("no rules")
	}
	for _, r := range rules {
		name := strings.TrimPrefix(r.Source, "alert ")
		if !strings.Contains(string(docs), "`"+name+"`") {
			t.Errorf("docs/operations.md does not describe %s", name)
		}
		for _, missing := range []bool{r.Labels["severity"] == "", r.Annotations["summary"] == "", r.Annotations["description"] == ""} {
			if missing {
				t.Errorf("%s: needs labels.severity, annotations.summary and annotations.description", name)
				break
			}
		}
		if r.Signal == r.Query && !strings.Contains(r.Query, "==") {
			t.Errorf("%s: %q has no threshold to strip for the real-cluster check", name, r.Query)
		}
	}
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{`up`, []string{"up"}},
		{`rate(a_total{job="x",code!~"2.."}[5m])`, []string{"a_total"}},
		{`histogram_quantile(0.99, sum by (node, le) (rate(h_bucket{node=~".*"}[1m])))`, []string{"h_bucket"}},
		{`sum(rate(a[1m])) without (instance) / on (node) group_left b`, []string{"a", "b"}},
		{`sum by (node) (a) or sum by (node) (b) * 0`, []string{"a", "b"}},
		{`time() - max by (node) (ts_seconds offset 5m) > 120`, []string{"ts_seconds"}},
		{`{__name__="named", job="x"}`, []string{"named"}},
		{`count(a{l="by (x)"}) > bool 1e3`, []string{"a"}},
		{`a @ start() + b:recorded`, []string{"a", "b:recorded"}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got, err := monitoring.MetricNames(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := monitoring.MetricNames(`a{l="open}`); err == nil {
		t.Error("an unterminated string is not an error")
	}
}

func TestThreshold(t *testing.T) {
	tests := []struct{ query, signal, threshold string }{
		{`a > 1`, `a`, `> 1`},
		{`sum by (n) (increase(a[5m])) > 0`, `sum by (n) (increase(a[5m]))`, `> 0`},
		{`up{job=~"x"} == 0`, `up{job=~"x"}`, `== 0`},
		{`count(a > 1)`, `count(a > 1)`, ``},
		{`a{l=">"}`, `a{l=">"}`, ``},
	}
	for _, tc := range tests {
		s, th := monitoring.Threshold(tc.query)
		if s != tc.signal || th != tc.threshold {
			t.Errorf("Threshold(%q) = %q, %q; want %q, %q", tc.query, s, th, tc.signal, tc.threshold)
		}
	}
}

func TestInstantiate(t *testing.T) {
	got := monitoring.Instantiate(`rate(a{node=~"$node"}[$__rate_interval])`, "1m")
	if want := `rate(a{node=~".*"}[1m])`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestPromtool checks the rule file and runs its unit tests (made-up faults,
// and the series of a real scrape) with promtool
// (Debian's prometheus package), when it is installed.
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian's prometheus package): cannot check the rules")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yaml"}, {"test", "rules", "alerts_test.yaml", "scraped_test.yaml"}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}
