// Command conformance turns the JSON report of an e2e.test run (Ginkgo's
// --ginkgo.json-report) into the results table of `make conformance`: one
// row per selected test with its outcome and, for a failure or a skip, the
// reason. Tests the run excluded on purpose (the skip list, see
// hack/conformance/skip.txt) are listed as skipped with the reason given
// there. It prints "N passed, N failed, N skipped" last and exits 1 when a
// selected test failed.
//
//	go run ./hack/conformance -report DIR/report.json -focus REGEX -skip-file FILE [-out results.md]
//
// With -compare LABEL=REPORT (repeated), it writes one side-by-side table
// of several runs instead (docs/conformance.md): counts per run, then every
// test with each run's outcome and the reasons.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	report := flag.String("report", "", "Ginkgo JSON report written by e2e.test")
	focus := flag.String("focus", "", "the run's --ginkgo.focus")
	skipFile := flag.String("skip-file", "", "lines of REGEX<TAB>reason excluded from the run")
	out := flag.String("out", "", "also write the table to this file")
	var runs multi
	flag.Var(&runs, "compare", "LABEL=REPORT of one run, repeated: a side-by-side table of the runs")
	flag.Parse()
	if len(runs) > 0 {
		if err := compare(runs, *focus, *skipFile, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			os.Exit(2)
		}
		return
	}
	failed, err := run(*report, *focus, *skipFile, *out, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// multi is a repeated string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func run(reportPath, focus, skipFile, out string, stdout io.Writer) (failed bool, err error) {
	focusRE, err := regexp.Compile(focus)
	if err != nil {
		return false, fmt.Errorf("focus: %w", err)
	}
	skips, err := readSkips(skipFile)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(reportPath)
	if err != nil {
		return false, err
	}
	results, err := parse(data, focusRE, skips)
	if err != nil {
		return false, fmt.Errorf("%s: %w", reportPath, err)
	}
	var b strings.Builder
	writeTable(&b, results)
	if out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			return false, err
		}
	}
	fmt.Fprint(stdout, b.String())
	for _, r := range results {
		if r.Outcome != "passed" && r.Outcome != "skipped" {
			return true, nil
		}
	}
	return false, nil
}

// skip is one exclusion of the run: tests whose name matches are not run.
type skip struct {
	re     *regexp.Regexp
	reason string
}

// readSkips reads REGEX<TAB>reason lines; blank lines and # comments are
// ignored.
func readSkips(path string) ([]skip, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var skips []skip
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		expr, reason, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want REGEX<TAB>reason", path, n)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		skips = append(skips, skip{re, strings.TrimSpace(reason)})
	}
	return skips, sc.Err()
}

// Result is one row of the table.
type Result struct {
	Name     string
	Outcome  string // passed, failed, skipped (and Ginkgo's other end states)
	Reason   string
	Duration time.Duration
}

// specReport is the part of Ginkgo's types.SpecReport that the table needs.
type specReport struct {
	ContainerHierarchyTexts []string
	LeafNodeType            string
	LeafNodeText            string
	State                   string
	RunTime                 time.Duration
	Failure                 *struct{ Message string }
}

// parse picks the tests the run selected out of every spec in the report
// (Ginkgo lists specs the focus filtered out as skipped, with no message).
func parse(data []byte, focus *regexp.Regexp, skips []skip) ([]Result, error) {
	var suites []struct{ SpecReports []specReport }
	if err := json.Unmarshal(data, &suites); err != nil {
		return nil, err
	}
	var results []Result
	for _, suite := range suites {
		for _, s := range suite.SpecReports {
			if s.LeafNodeType != "It" {
				continue
			}
			if r, ok := result(s, focus, skips); ok {
				results = append(results, r)
			}
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	return results, nil
}

func result(s specReport, focus *regexp.Regexp, skips []skip) (Result, bool) {
	name := strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " ")
	if !focus.MatchString(name) {
		return Result{}, false
	}
	r := Result{Name: name, Outcome: s.State, Duration: s.RunTime}
	if s.Failure != nil {
		r.Reason = firstLine(s.Failure.Message)
	}
	if s.State == "skipped" && r.Reason == "" {
		for _, sk := range skips {
			if sk.re.MatchString(name) {
				r.Reason = "excluded: " + sk.reason
				return r, true
			}
		}
		return Result{}, false // filtered out by a narrower FOCUS
	}
	return r, true
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func writeTable(w io.Writer, results []Result) {
	counts := map[string]int{}
	fmt.Fprintln(w, "| test | result | time | reason |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range results {
		counts[r.Outcome]++
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", escape(r.Name), r.Outcome, r.Duration.Round(time.Second), escape(r.Reason))
	}
	fmt.Fprintln(w)
	other := len(results) - counts["passed"] - counts["failed"] - counts["skipped"]
	if other > 0 {
		fmt.Fprintf(w, "%d ended otherwise (aborted, panicked, interrupted or timed out)\n", other)
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", counts["passed"], counts["failed"]+other, counts["skipped"])
}

func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
