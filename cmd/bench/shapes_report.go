package main

import (
	"fmt"
	"io"
)

// writeShapesReport prints one row per shape and size: its objects, its
// load with nft -f and with our applier, and each change's transaction.
func writeShapesReport(w io.Writer, m *machine, c shapesConfig, all []*shapeResult) {
	fmt.Fprintf(w, "Machine: %s. Medians of %d runs; wall time (system CPU time in brackets: the kernel's work).\n\n", m, c.runs)
	fmt.Fprint(w, "| cluster | shape | chains | rules | map and set elements | load: nft -f | load: our applier |")
	cols := shapeColumns()
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c.label)
	}
	fmt.Fprint(w, "\n|---|---|---|---|---|---|---|")
	for range cols {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range all {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %s | %s |", r.size, r.shape, r.chains, r.rules, r.elements,
			shapeCell(r.nftLoad, -1), shapeCell(r.ourLoad, -1))
		for _, c := range cols {
			fmt.Fprintf(w, " %s |", shapeCell(r.changes[c.name], r.ops[c.name]))
		}
		fmt.Fprintln(w)
	}
	for _, r := range all {
		if r.failed != "" {
			fmt.Fprintf(w, "\n%s at %s, nft -f: %s\n", r.shape, r.size, r.failed)
		}
	}
}

// shapeCell is the median wall time, the median system time and, when
// ops >= 0, the operations of the transaction.
func shapeCell(cs []cost, ops int) string {
	if len(cs) == 0 {
		return "-"
	}
	var wall, sys []float64
	for _, c := range cs {
		wall, sys = append(wall, c.Wall.Seconds()), append(sys, c.Sys.Seconds())
	}
	s := fmt.Sprintf("%s (s %s)", dur(median(wall)), dur(median(sys)))
	if ops >= 0 {
		s += fmt.Sprintf(", %d ops", ops)
	}
	return s
}

// shapeColumns are the transactions printed: each change, then its way
// back when it has a label.
func shapeColumns() []struct{ name, label string } {
	var out []struct{ name, label string }
	for _, ch := range shapeChanges {
		out = append(out, struct{ name, label string }{ch.name, ch.label})
		if ch.back != "" {
			out = append(out, struct{ name, label string }{ch.name + "/back", ch.back})
		}
	}
	return out
}
