package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// report is a Ginkgo JSON report cut down to what parse reads, in the
// shape e2e.test writes: a list of suites, every spec of the binary listed,
// those outside the focus as skipped without a message.
const report = `[{"SpecReports": [
 {"ContainerHierarchyTexts": ["[sig-network] Services"], "LeafNodeType": "It",
  "LeafNodeText": "should serve a basic endpoint from pods [Conformance]", "State": "passed", "RunTime": 12000000000},
 {"ContainerHierarchyTexts": ["[sig-network] Services"], "LeafNodeType": "It",
  "LeafNodeText": "should be rejected when no endpoints exist", "State": "failed", "RunTime": 3000000000,
  "Failure": {"Message": "expected REFUSED\nmore detail"}},
 {"ContainerHierarchyTexts": ["[sig-network] Services"], "LeafNodeType": "It",
  "LeafNodeText": "should work after restarting kube-proxy [Disruptive]", "State": "skipped"},
 {"ContainerHierarchyTexts": ["[sig-network] Services"], "LeafNodeType": "It",
  "LeafNodeText": "should handle load balancer cleanup finalizer", "State": "skipped",
  "Failure": {"Message": "Only supported for providers [gce gke] (not local)"}},
 {"ContainerHierarchyTexts": ["[sig-storage] Volumes"], "LeafNodeType": "It",
  "LeafNodeText": "should store data", "State": "skipped"},
 {"LeafNodeType": "SynchronizedBeforeSuite", "State": "passed"}
]}]`

func TestParse(t *testing.T) {
	skips := []skip{{regexp.MustCompile(`\[Disruptive\]`), "restarts the proxy"}}
	got, err := parse([]byte(report), regexp.MustCompile(`\[sig-network\] Services`), skips)
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Name: "[sig-network] Services should be rejected when no endpoints exist", Outcome: "failed", Reason: "expected REFUSED", Duration: 3 * time.Second},
		{Name: "[sig-network] Services should handle load balancer cleanup finalizer", Outcome: "skipped", Reason: "Only supported for providers [gce gke] (not local)"},
		{Name: "[sig-network] Services should serve a basic endpoint from pods [Conformance]", Outcome: "passed", Duration: 12 * time.Second},
		{Name: "[sig-network] Services should work after restarting kube-proxy [Disruptive]", Outcome: "skipped", Reason: "excluded: restarts the proxy"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.json")
	skipPath := filepath.Join(dir, "skip.txt")
	if err := os.WriteFile(reportPath, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skipPath, []byte("# comment\n\\[Disruptive\\]\trestarts the proxy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		focus      string
		wantFailed bool
		wantLast   string
	}{
		{"a failure fails the run", `\[sig-network\] Services`, true, "1 passed, 1 failed, 2 skipped"},
		{"a narrower focus", `basic endpoint`, false, "1 passed, 0 failed, 0 skipped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			failed, err := run(reportPath, tc.focus, skipPath, filepath.Join(dir, "results.md"), &out)
			if err != nil {
				t.Fatal(err)
			}
			if failed != tc.wantFailed {
				t.Errorf("failed = %v, want %v", failed, tc.wantFailed)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if last := lines[len(lines)-1]; last != tc.wantLast {
				t.Errorf("last line %q, want %q", last, tc.wantLast)
			}
			written, err := os.ReadFile(filepath.Join(dir, "results.md"))
			if err != nil || string(written) != out.String() {
				t.Errorf("results.md differs from the printed table (err %v)", err)
			}
		})
	}
}

func TestReadSkipsRejectsLineWithoutReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skip.txt")
	if err := os.WriteFile(path, []byte(`\[Serial\]`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSkips(path); err == nil {
		t.Error("readSkips accepted a line without a reason")
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(one, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	// The other run passed the test the first one failed.
	if err := os.WriteFile(other, []byte(strings.Replace(report, `"State": "failed"`, `"State": "passed"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	focus := `\[sig-network\] Services`
	if err := compare([]string{"a=" + one, "b=" + other}, focus, "", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| passed | 1 | 2 |",
		"| failed | 1 | 0 |",
		"| of which [Conformance], passed | 1 of 1 | 1 of 1 |",
		"| [sig-network] Services should be rejected when no endpoints exist | failed | passed | expected REFUSED |",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if err := compare([]string{"no-label"}, focus, "", &out); err == nil {
		t.Error("compare accepted a run without LABEL=")
	}
}
