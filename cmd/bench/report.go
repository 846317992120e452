package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// writeSyncReport prints the sync benchmark as markdown tables of medians.
func writeSyncReport(w io.Writer, m *machine, c syncConfig, all []sizeResult) {
	fmt.Fprintf(w, "Machine: %s. Medians of %d runs.\n\n", m, c.runs)
	fmt.Fprintln(w, "| cluster (Services x endpoints) | Service ports | compile | first full sync | one endpoint changed | 1% of Services changed | tables read back | counters read (a scrape) | peak RSS | chains | rules | sets | elements |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range all {
		first := r.runs[0]
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %.0f MiB | %d | %d | %d | %d |\n",
			r.size, first.Ports,
			medianCost(r.runs, func(x runResult) cost { return x.Compile }, false),
			medianCost(r.runs, func(x runResult) cost { return x.FullSync }, true),
			medianCost(r.runs, func(x runResult) cost { return x.OneEndpoint }, true),
			medianCost(r.runs, func(x runResult) cost { return x.OnePercent }, true),
			medianCost(r.runs, func(x runResult) cost { return x.ReadBack }, false),
			medianCost(r.runs, func(x runResult) cost { return x.ReadCounters }, false),
			median(r.rss), first.Chains, first.Rules, first.Sets, first.Elements)
	}
	fmt.Fprintln(w, "\nTimes are wall clock, with the process's user CPU (our code) and system CPU (mostly the kernel")
	fmt.Fprintln(w, "committing the netlink transaction, which runs in our thread) in brackets, then the operations and")
	fmt.Fprintln(w, "bytes sent in the transaction.")
	if c.memLimit != "" {
		writeLimitedTable(w, c.memLimit, all)
	}
	if c.baseline {
		writeBaselineTable(w, all)
	}
}

// medianCost formats the median wall time of a step, its median user and
// system CPU, and (for syncs) the operations of the first run.
func medianCost(runs []runResult, get func(runResult) cost, ops bool) string {
	var wall, user, sys []float64
	for _, r := range runs {
		c := get(r)
		wall, user, sys = append(wall, c.Wall.Seconds()), append(user, c.User.Seconds()), append(sys, c.Sys.Seconds())
	}
	s := fmt.Sprintf("%s (u %s, s %s)", dur(median(wall)), dur(median(user)), dur(median(sys)))
	if ops {
		s += fmt.Sprintf(", %d ops, %s", get(runs[0]).Ops, byteSize(get(runs[0]).Bytes))
	}
	return s
}

// writeLimitedTable shows what Go's soft memory limit trades: peak memory
// for garbage-collection CPU.
func writeLimitedTable(w io.Writer, limit string, all []sizeResult) {
	fmt.Fprintf(w, "\nThe same runs with GOMEMLIMIT=%s in the environment (Go's soft memory limit, an operator's knob):\n\n", limit)
	fmt.Fprintln(w, "| cluster | first full sync | peak RSS | without the limit: first full sync | peak RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range all {
		if len(r.limited) == 0 {
			fmt.Fprintf(w, "| %s | not measured (-memlimit-max-services) | - | - | - |\n", r.size)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %.0f MiB | %s | %.0f MiB |\n", r.size,
			medianCost(r.limited, func(x runResult) cost { return x.FullSync }, false), median(r.rssLim),
			medianCost(r.runs, func(x runResult) cost { return x.FullSync }, false), median(r.rss))
	}
}

func writeBaselineTable(w io.Writer, all []sizeResult) {
	fmt.Fprintln(w, "\nThe same clusters in kube-proxy's nftables shape, written by `cmd/bench` as the `add ...`")
	fmt.Fprintln(w, "transaction kube-proxy sends, loaded with `nft -f` into a fresh namespace (wall clock, median).")
	fmt.Fprintln(w, "Ratio is our time / that time.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| cluster | ours: first full sync | kube-proxy shape: nft -f | ratio | ours: one endpoint | kube-proxy shape: one endpoint | ratio |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range all {
		full := wallMedian(r.runs, func(x runResult) cost { return x.FullSync })
		one := wallMedian(r.runs, func(x runResult) cost { return x.OneEndpoint })
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.size,
			dur(full), baselineCell(r.kpFull, r.kpFailed), ratio(full, r.kpFull),
			dur(one), baselineCell(r.kpChange, r.kpFailed), ratio(one, r.kpChange))
	}
	for _, r := range all {
		if r.kpFailed != "" {
			fmt.Fprintf(w, "\n%s, kube-proxy shape: %s\n", r.size, r.kpFailed)
		}
	}
}

func wallMedian(runs []runResult, get func(runResult) cost) float64 {
	var xs []float64
	for _, r := range runs {
		xs = append(xs, get(r).Wall.Seconds())
	}
	return median(xs)
}

// baselineCell is the median wall time of the baseline's runs with nft's
// median user and system CPU.
func baselineCell(cs []cost, failed string) string {
	if len(cs) == 0 {
		return "-"
	}
	var wall, user, sys []float64
	for _, c := range cs {
		wall, user, sys = append(wall, c.Wall.Seconds()), append(user, c.User.Seconds()), append(sys, c.Sys.Seconds())
	}
	s := fmt.Sprintf("%s (u %s, s %s)", dur(median(wall)), dur(median(user)), dur(median(sys)))
	if strings.Contains(failed, "timed out") {
		s = "> " + s
	}
	if len(cs) == 1 {
		s += ", 1 run"
	}
	return s
}

func ratio(ours float64, theirs []cost) string {
	if len(theirs) == 0 || ours == 0 {
		return "-"
	}
	var xs []float64
	for _, c := range theirs {
		xs = append(xs, c.Wall.Seconds())
	}
	t := median(xs)
	return fmt.Sprintf("%.3f (%.0fx faster)", ours/t, t/ours)
}

// byteSize prints a byte count.
func byteSize(b int) string {
	switch {
	case b >= 10<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
}

// dur prints seconds with a unit that keeps 2-3 significant digits.
func dur(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f s", s)
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", s)
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", s*1e3)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.0f µs", s*1e6)
}

// writeDataplaneReport prints the connect latencies as a markdown table.
func writeDataplaneReport(w io.Writer, m *machine, c dpConfig, rows []dpRow) {
	fmt.Fprintf(w, "Machine: %s. %d runs of %d connections per case; medians of the runs' percentiles.\n\n", m, c.runs, c.conns)
	fmt.Fprintln(w, "| destination | Services programmed | ours: p50 | ours: p99 | p50 vs reference | kube-proxy shape: p50 | kube-proxy shape: p99 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	var one, two float64
	for i, r := range rows {
		ref := "-"
		switch {
		case i == 0:
		case r.services == 1 && one == 0:
			one = r.ours.p50
			ref = "reference"
		case strings.HasSuffix(r.name, " 2 endpoints"):
			two = r.ours.p50
			ref = "reference"
		case r.services == 2 && two > 0:
			ref = relative(r.ours.p50, two)
		case one > 0:
			ref = relative(r.ours.p50, one)
		}
		services := strconv.Itoa(r.services)
		if i == 0 {
			services = "0"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.name, services,
			dur(r.ours.p50), dur(r.ours.p99), ref, latencyCell(r.kp.p50, r.kpSkipped, i), latencyCell(r.kp.p99, r.kpSkipped, i))
	}
}

func relative(x, ref float64) string { return fmt.Sprintf("%+.1f%%", (x/ref-1)*100) }

func latencyCell(x float64, skipped string, row int) string {
	if row == 0 || skipped != "" || x == 0 {
		return "-"
	}
	return dur(x)
}
