package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// writeAgentReport prints, for each size, a table of medians with one
// column per proxy, then (for several sizes) the sizes side by side.
func writeAgentReport(w io.Writer, res *agentResults) {
	fmt.Fprintf(w, "Machine: %s.\n\nVersions: %s.\n", res.Machine, versionText(res.Versions))
	writeLoads(w, res.Loads)
	sizes := resultSizes(res)
	for _, s := range sizes {
		writeSizeTable(w, res, s)
	}
	if len(sizes) > 1 {
		writeSizesTable(w, res, sizes)
	}
	for _, k := range slices.Sorted(maps.Keys(res.Skipped)) {
		fmt.Fprintf(w, "\n%s: %s\n", k, res.Skipped[k])
	}
}

// writeLoads prints how long each size's cluster took to write into the
// API before its runs.
func writeLoads(w io.Writer, loads []apiLoad) {
	if len(loads) == 0 {
		return
	}
	fmt.Fprintf(w, "\nLoading the API: Services and EndpointSlices created or deleted (in etcd) or rewritten (through the API), until the API lists them:\n\n")
	fmt.Fprintf(w, "| Services x endpoints | objects | time | objects/s |\n|---|---|---|---|\n")
	for _, l := range loads {
		fmt.Fprintf(w, "| %s | %d | %s | %.0f |\n", l.Size, l.Objects, dur(l.Seconds), l.rate())
	}
}

func versionText(v map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(v)) {
		parts = append(parts, fmt.Sprintf("%s: %s", k, v[k]))
	}
	return strings.Join(parts, "; ")
}

// resultSizes lists the sizes measured, in the order first measured.
func resultSizes(res *agentResults) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range res.Runs {
		if !seen[r.Size] {
			seen[r.Size] = true
			out = append(out, r.Size)
		}
	}
	return out
}

// agentRow is one line of a size's table: a label and how to read one
// run's figure (ok false: the run has none).
type agentRow struct {
	label string
	get   func(r agentRun) []float64
	unit  func(float64) string
}

func seconds(x float64) string { return dur(x) }
func mib(x float64) string     { return fmt.Sprintf("%.0f MiB", x/(1<<20)) }
func count(x float64) string   { return fmt.Sprintf("%.0f", x) }

func one(x float64) []float64 {
	if x == 0 {
		return nil
	}
	return []float64{x}
}

func changeFigures(kind string, programming bool) func(r agentRun) []float64 {
	return func(r agentRun) []float64 {
		var out []float64
		for _, ch := range r.Changes[kind] {
			if programming {
				out = append(out, ch.Programming)
			} else {
				out = append(out, ch.Sync)
			}
		}
		return out
	}
}

func churnFigure(get func(*churnResult) float64) func(r agentRun) []float64 {
	return func(r agentRun) []float64 {
		if r.Churn == nil {
			return nil
		}
		return []float64{get(r.Churn)}
	}
}

func agentRows(s size) []agentRow {
	k := s.endpoints
	rows := []agentRow{
		{"cold full sync: exec to every Service in the kernel", func(r agentRun) []float64 { return one(r.Cold) }, seconds},
		{"CPU used from its start until its syncs stop (user + system, children included)", func(r agentRun) []float64 { return one(r.StartCPU) }, seconds},
		{"its first sync, by its own sync_proxy_rules_duration_seconds (kube-proxy: IPv4 + IPv6)", func(r agentRun) []float64 { return one(r.FirstSync) }, seconds},
	}
	for _, c := range []struct{ kind, what string }{
		{"replace", fmt.Sprintf("one endpoint's address replaced (%d endpoints)", k)},
		{"remove", fmt.Sprintf("one endpoint removed (%d -> %d)", k, k-1)},
		{"add", fmt.Sprintf("one endpoint added (%d -> %d)", k-1, k)},
	} {
		rows = append(rows,
			agentRow{c.what + ": network programming latency", changeFigures(c.kind, true), seconds},
			agentRow{c.what + ": its sync", changeFigures(c.kind, false), seconds})
	}
	return append(rows,
		agentRow{"churn: CPU used (user + system, children included)", churnFigure(func(c *churnResult) float64 { return c.CPU }), seconds},
		agentRow{"churn: syncs", churnFigure(func(c *churnResult) float64 { return c.Syncs }), count},
		agentRow{"churn: network programming latency p50 (histogram estimate)", churnFigure(func(c *churnResult) float64 { return c.P50 }), seconds},
		agentRow{"churn: network programming latency p99 (histogram estimate)", churnFigure(func(c *churnResult) float64 { return c.P99 }), seconds},
		agentRow{"churn: p99's histogram bucket, upper bound", churnFigure(func(c *churnResult) float64 { return c.P99Le }), seconds},
		agentRow{"churn: network programming latency mean (exact)", churnFigure(func(c *churnResult) float64 { return c.Mean }), seconds},
		agentRow{"churn: latencies observed / updates written", churnFigure(func(c *churnResult) float64 { return c.Programmed / float64(c.Updates) }),
			func(x float64) string { return fmt.Sprintf("%.3f", x) }},
		agentRow{"peak resident memory (VmHWM)", func(r agentRun) []float64 { return one(float64(r.HWM)) }, mib},
		agentRow{"peak resident memory (ru_maxrss after exit)", func(r agentRun) []float64 { return one(float64(r.MaxRSS)) }, mib},
	)
}

func writeSizeTable(w io.Writer, res *agentResults, sizeText string) {
	s, _ := parseSizes(sizeText)
	proxies := resultProxies(res)
	fmt.Fprintf(w, "\n%s Services x endpoints; medians over runs (changes: over every change of every run):\n\n", sizeText)
	fmt.Fprintf(w, "| measure | %s |", strings.Join(proxies, " | "))
	if len(proxies) == 2 {
		fmt.Fprintf(w, " %s / %s |", proxies[1], proxies[0])
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(proxies)+btoi(len(proxies) == 2)))
	for _, row := range agentRows(s[0]) {
		cells, meds, any := []string{}, []float64{}, false
		for _, p := range proxies {
			xs := figures(res, p, sizeText, row.get)
			m := median(xs)
			meds = append(meds, m)
			cells = append(cells, cell(xs, m, row.unit))
			any = any || len(xs) > 0
		}
		if !any {
			continue
		}
		fmt.Fprintf(w, "| %s | %s |", row.label, strings.Join(cells, " | "))
		if len(proxies) == 2 {
			fmt.Fprintf(w, " %s |", ratioText(meds[1], meds[0]))
		}
		fmt.Fprintln(w)
	}
	writeColdTimeouts(w, res, sizeText)
	var loads []string
	for _, r := range res.Runs {
		if r.Size == sizeText {
			loads = append(loads, strings.Fields(r.Load + " ?")[0])
		}
	}
	fmt.Fprintf(w, "\nLoad average (1 min) at the start of each run, in order: %s.\n", strings.Join(loads, ", "))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cell is a median and the number of values it is the median of.
func cell(xs []float64, m float64, unit func(float64) string) string {
	switch len(xs) {
	case 0:
		return "-"
	case 1:
		return unit(m) + " (1)"
	}
	return fmt.Sprintf("%s (%d)", unit(m), len(xs))
}

func ratioText(a, b float64) string {
	if a == 0 || b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%.1f", a/b)
}

// figures collects a row's values over the runs of proxy p at size s.
func figures(res *agentResults, p, s string, get func(agentRun) []float64) []float64 {
	var out []float64
	for _, r := range res.Runs {
		if r.Proxy == p && r.Size == s {
			for _, x := range get(r) {
				if !math.IsNaN(x) {
					out = append(out, x)
				}
			}
		}
	}
	return out
}

func resultProxies(res *agentResults) []string {
	var out []string
	for _, r := range res.Runs {
		if !containsString(out, r.Proxy) {
			out = append(out, r.Proxy)
		}
	}
	return out
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func writeColdTimeouts(w io.Writer, res *agentResults, s string) {
	for _, r := range res.Runs {
		if r.Size == s && r.Cold == 0 {
			fmt.Fprintf(w, "\n%s at %s: not every Service programmed %s after its start (-cold-timeout); bound: cold full sync > %s.\n",
				r.Proxy, s, dur(r.ColdTimeout), dur(r.ColdTimeout))
		}
	}
}

// writeSizesTable puts the sizes side by side: cold sync and peak memory.
func writeSizesTable(w io.Writer, res *agentResults, sizes []string) {
	proxies := resultProxies(res)
	fmt.Fprintf(w, "\nBy cluster size (medians; the number of runs in brackets):\n\n| Services x endpoints |")
	for _, p := range proxies {
		fmt.Fprintf(w, " %s: cold full sync | %s: peak memory |", p, p)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|---|", len(proxies)))
	for _, s := range sizes {
		fmt.Fprintf(w, "| %s |", s)
		for _, p := range proxies {
			cold := figures(res, p, s, func(r agentRun) []float64 { return one(r.Cold) })
			hwm := figures(res, p, s, func(r agentRun) []float64 { return one(float64(r.HWM)) })
			c := cell(cold, median(cold), seconds)
			if len(cold) == 0 && timedOut(res, p, s) {
				c = "> " + dur(timeoutOf(res, p, s))
			}
			fmt.Fprintf(w, " %s | %s |", c, cell(hwm, median(hwm), mib))
		}
		fmt.Fprintln(w)
	}
}

func timedOut(res *agentResults, p, s string) bool { return timeoutOf(res, p, s) > 0 }

func timeoutOf(res *agentResults, p, s string) float64 {
	for _, r := range res.Runs {
		if r.Proxy == p && r.Size == s && r.Cold == 0 {
			return r.ColdTimeout
		}
	}
	return 0
}
