package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
)

// column is one column of a side-by-side table: a label ("nftproxy, 3
// nodes") and the results of that run.
type column struct {
	label   string
	results map[string]Result
}

// compare writes the side-by-side table of several runs' reports, each
// given as LABEL=PATH: counts per run, then one row per test with each
// run's outcome and the reasons.
func compare(runs []string, focus, skipFile string, w io.Writer) error {
	focusRE, err := regexp.Compile(focus)
	if err != nil {
		return fmt.Errorf("focus: %w", err)
	}
	skips, err := readSkips(skipFile)
	if err != nil {
		return err
	}
	var cols []column
	names := map[string]bool{}
	for _, r := range runs {
		label, path, ok := strings.Cut(r, "=")
		if !ok {
			return fmt.Errorf("-compare %q: want LABEL=REPORT", r)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		results, err := parse(data, focusRE, skips)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		col := column{label: label, results: map[string]Result{}}
		for _, res := range results {
			col.results[res.Name] = res
			names[res.Name] = true
		}
		cols = append(cols, col)
	}
	writeCounts(w, cols)
	writeRows(w, cols, slices.Sorted(maps.Keys(names)))
	return nil
}

// writeHeader writes a table's header: first (an empty corner when ""), a
// column per run, then last when it is not "".
func writeHeader(w io.Writer, cols []column, first, last string) {
	if first == "" {
		fmt.Fprint(w, "| |")
	} else {
		fmt.Fprintf(w, "| %s |", first)
	}
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c.label)
	}
	n := len(cols)
	if last != "" {
		fmt.Fprintf(w, " %s |", last)
		n++
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", n))
}

func writeCounts(w io.Writer, cols []column) {
	writeHeader(w, cols, "", "")
	for _, outcome := range []string{"passed", "failed", "skipped"} {
		fmt.Fprintf(w, "| %s |", outcome)
		for _, c := range cols {
			fmt.Fprintf(w, " %d |", count(c, outcome, ""))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| of which [Conformance], passed |")
	for _, c := range cols {
		fmt.Fprintf(w, " %d of %d |", count(c, "passed", "[Conformance]"), count(c, "", "[Conformance]"))
	}
	fmt.Fprint(w, "\n\n")
}

// count is the number of c's results with that outcome ("" for any; a
// failure is anything but passed and skipped) whose name contains tag.
func count(c column, outcome, tag string) int {
	n := 0
	for name, r := range c.results {
		o := r.Outcome
		if o != "passed" && o != "skipped" {
			o = "failed"
		}
		if (outcome == "" || o == outcome) && strings.Contains(name, tag) {
			n++
		}
	}
	return n
}

func writeRows(w io.Writer, cols []column, names []string) {
	writeHeader(w, cols, "test", "reason (skips, failures)")
	for _, name := range names {
		fmt.Fprintf(w, "| %s |", escape(name))
		for _, c := range cols {
			outcome := "-"
			if r, ok := c.results[name]; ok {
				outcome = r.Outcome
			}
			fmt.Fprintf(w, " %s |", outcome)
		}
		fmt.Fprintf(w, " %s |\n", escape(reasons(cols, name)))
	}
}

// reasons is the reason of a test's row: the one reason when every run
// that gives one gives the same, else each run's, labelled.
func reasons(cols []column, name string) string {
	var labelled []string
	distinct := map[string]bool{}
	for _, c := range cols {
		if r := c.results[name].Reason; r != "" {
			labelled = append(labelled, c.label+": "+r)
			distinct[r] = true
		}
	}
	if len(distinct) == 1 {
		for r := range distinct {
			return r
		}
	}
	return strings.Join(labelled, "; ")
}
