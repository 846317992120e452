package main

import (
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// The picture docs/benchmarks.md shows: cold full sync time and peak
// memory against the number of Services, one line per proxy, drawn from
// the runs' medians (no other numbers go in). A cold sync that timed out
// is drawn as an arrow up from its bound.

// point is one proxy's median at one size.
type point struct {
	services  int
	label     string // "10000x10"
	cold, mem float64
	coldAbove bool // cold is a bound: the sync had not finished
}

// series collects each proxy's points, by Services.
func series(all []*agentResults) map[string][]point {
	out := map[string][]point{}
	for _, res := range all {
		for _, p := range resultProxies(res) {
			for _, s := range resultSizes(res) {
				if pt, ok := pointOf(res, p, s); ok {
					out[p] = append(out[p], pt)
				}
			}
		}
	}
	for p := range out {
		sort.Slice(out[p], func(i, j int) bool { return out[p][i].services < out[p][j].services })
	}
	return out
}

func pointOf(res *agentResults, p, s string) (point, bool) {
	sz, err := parseSizes(s)
	if err != nil {
		return point{}, false
	}
	cold := figures(res, p, s, func(r agentRun) []float64 { return one(r.Cold) })
	mem := figures(res, p, s, func(r agentRun) []float64 { return one(float64(r.HWM)) })
	pt := point{services: sz[0].services, label: s, cold: median(cold), mem: median(mem)}
	if len(cold) == 0 {
		if !timedOut(res, p, s) {
			return point{}, false
		}
		pt.cold, pt.coldAbove = timeoutOf(res, p, s), true
	}
	return pt, true
}

// Layout of the picture, in SVG user units.
const (
	svgW, svgH     = 960, 450
	panelW, panelH = 360, 270
	panelTop       = 84
)

var panelLeft = [2]float64{90, 570}

var colors = map[string]string{"nftproxy": "#1f77b4", "kube-proxy": "#d62728"}

// drawScale writes the picture of all.
func drawScale(w io.Writer, all []*agentResults) error {
	ser := series(all)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgW, svgH)
	b.WriteString(`<text x="480" y="24" text-anchor="middle" font-size="15" font-weight="bold">Cold full sync and peak memory against cluster size (real kube-apiserver, one node)</text>` + "\n")
	xr := servicesRange(ser)
	coldAxis := logAxis(valuesOf(ser, func(p point) float64 { return p.cold }))
	memAxis := linearAxis(valuesOf(ser, func(p point) float64 { return p.mem / (1 << 20) }))
	drawPanel(&b, 0, "cold full sync (s, log scale)", xr, coldAxis, ser, func(p point) float64 { return p.cold })
	drawPanel(&b, 1, "peak resident memory (MiB)", xr, memAxis, ser, func(p point) float64 { return p.mem / (1 << 20) })
	drawLegend(&b, ser)
	fmt.Fprintf(&b, `<text x="480" y="%d" text-anchor="middle" font-size="11" fill="#333">%s</text>`+"\n", svgH-40, html.EscapeString(sizesNote(ser)))
	for i, res := range all {
		fmt.Fprintf(&b, `<text x="480" y="%d" text-anchor="middle" font-size="10" fill="#555">%s</text>`+"\n", svgH-24+12*i, html.EscapeString(firstLines(res.Machine, 1)))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// sizesNote lists the sizes drawn and what a point is.
func sizesNote(ser map[string][]point) string {
	var sizes []string
	bound := false
	for _, p := range slices.Sorted(maps.Keys(ser)) {
		for _, pt := range ser[p] {
			if !containsString(sizes, pt.label) {
				sizes = append(sizes, pt.label)
			}
			bound = bound || pt.coldAbove
		}
	}
	note := "Services x endpoints: " + strings.Join(sizes, ", ") + ". Each point is the median of its runs"
	if bound {
		note += "; an open point with an arrow: not done when the run gave up (a bound)"
	}
	return note + "."
}

func valuesOf(ser map[string][]point, get func(point) float64) []float64 {
	var out []float64
	for _, pts := range ser {
		for _, p := range pts {
			if v := get(p); v > 0 {
				out = append(out, v)
			}
		}
	}
	return out
}

// axis maps values to [0, 1] and lists its ticks.
type axis struct {
	pos   func(v float64) float64
	ticks []float64
	text  func(v float64) string
}

func servicesRange(ser map[string][]point) axis {
	var xs []float64
	for _, pts := range ser {
		for _, p := range pts {
			xs = append(xs, float64(p.services))
		}
	}
	a := logAxis(xs)
	a.text = func(v float64) string { return fmt.Sprintf("%g", v) }
	return a
}

// logAxis spans the 1-2-5 ticks around xs.
func logAxis(xs []float64) axis {
	lo, hi := 1.0, 10.0
	if len(xs) > 0 {
		lo, hi = tick125(minOf(xs), false), tick125(maxOf(xs), true)
		if hi <= lo {
			hi = lo * 2
		}
	}
	var ticks []float64
	for d := math.Pow(10, math.Floor(math.Log10(lo))); d <= hi; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := d * m; v >= lo*0.999 && v <= hi*1.001 {
				ticks = append(ticks, v)
			}
		}
	}
	l0, l1 := math.Log10(lo), math.Log10(hi)
	return axis{pos: func(v float64) float64 { return (math.Log10(v) - l0) / (l1 - l0) }, ticks: ticks, text: tickText}
}

// linearAxis starts at 0 and ends at a round number above max(xs).
func linearAxis(xs []float64) axis {
	hi := 100.0
	if len(xs) > 0 {
		hi = maxOf(xs) * 1.1
	}
	step := math.Pow(10, math.Floor(math.Log10(hi)))
	for hi/step < 4 {
		step /= 2
	}
	top := math.Ceil(hi/step) * step
	var ticks []float64
	for v := 0.0; v <= top+step/2; v += step {
		ticks = append(ticks, v)
	}
	return axis{pos: func(v float64) float64 { return v / top }, ticks: ticks, text: tickText}
}

// tick125 is the largest 1, 2 or 5 times a power of ten at or below v
// (up false), or the smallest at or above it (up true).
func tick125(v float64, up bool) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	steps := []float64{1, 2, 5, 10}
	if up {
		for _, m := range steps {
			if d*m >= v*0.999 {
				return d * m
			}
		}
	}
	out := d
	for _, m := range steps[:3] {
		if d*m <= v*1.001 {
			out = d * m
		}
	}
	return out
}

func tickText(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// drawPanel draws one panel: frame, grid, ticks, and a line per proxy.
func drawPanel(b *strings.Builder, i int, title string, x, y axis, ser map[string][]point, get func(point) float64) {
	left := panelLeft[i]
	// Points stay clear of the frame: the axes span 5% to 95% of the
	// panel's width, and up to 92% of its height.
	px := func(v float64) float64 { return left + (0.05+0.9*x.pos(v))*panelW }
	py := func(v float64) float64 { return panelTop + panelH - (0.03+0.89*y.pos(v))*panelH }
	fmt.Fprintf(b, `<text x="%.0f" y="%d" text-anchor="middle" font-size="13">%s</text>`+"\n", left+panelW/2, panelTop-12, title)
	for _, t := range y.ticks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, left, py(t), left+panelW, py(t))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, py(t)+4, y.text(t))
	}
	for _, t := range x.ticks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, px(t), panelTop, px(t), panelTop+panelH)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(t), panelTop+panelH+16, x.text(t))
	}
	fmt.Fprintf(b, `<rect x="%.0f" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", left, panelTop, panelW, panelH)
	fmt.Fprintf(b, `<text x="%.0f" y="%d" text-anchor="middle">Services (log scale)</text>`+"\n", left+panelW/2, panelTop+panelH+34)
	top := map[int]float64{} // the highest value at each size, labelled above
	for _, pts := range ser {
		for _, pt := range pts {
			top[pt.services] = math.Max(top[pt.services], get(pt))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(ser)) {
		drawSeries(b, colors[p], ser[p], px, py, get, i == 0, top)
	}
}

// drawSeries draws a proxy's line and points; a bound is an open point
// with an arrow up and its "> N s".
// A label goes above its point when it is the highest at its size, else
// below, so that two series' labels do not overlap.
func drawSeries(b *strings.Builder, color string, pts []point, px, py func(float64) float64, get func(point) float64, bounds bool, top map[int]float64) {
	var path []string
	for _, p := range pts {
		v := get(p)
		if v <= 0 {
			continue
		}
		x, y := px(float64(p.services)), py(v)
		path = append(path, fmt.Sprintf("%.1f,%.1f", x, y))
		fill := color
		if p.coldAbove && bounds {
			fill = "white"
			fmt.Fprintf(b, `<path d="M%.1f,%.1f v-22 m-5,7 l5,-7 l5,7" stroke="%s" fill="none"/>`, x, y-5, color)
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s" text-anchor="end">&gt; %s</text>`, x-8, y-14, color, dur(v))
		} else {
			dy := -9.0
			if v < top[p.services] {
				dy = 18
			}
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10" text-anchor="middle">%s</text>`, x, y+dy, color, valueLabel(v, bounds))
		}
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s"/>`+"\n", x, y, fill, color)
	}
	if len(path) > 1 {
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(path, " "), color)
	}
}

func valueLabel(v float64, seconds bool) string {
	if seconds {
		return dur(v)
	}
	return fmt.Sprintf("%.0f", v)
}

func drawLegend(b *strings.Builder, ser map[string][]point) {
	x := 380.0
	for _, p := range slices.Sorted(maps.Keys(ser)) {
		fmt.Fprintf(b, `<line x1="%.0f" y1="42" x2="%.0f" y2="42" stroke="%s" stroke-width="3"/>`, x, x+24, colors[p])
		fmt.Fprintf(b, `<text x="%.0f" y="46">%s</text>`+"\n", x+30, html.EscapeString(p))
		x += 130
	}
}
