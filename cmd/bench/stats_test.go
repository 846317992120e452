package main

import (
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{3}, 3},
		{"odd count, unsorted", []float64{5, 1, 3}, 3},
		{"even count: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"outlier does not move it", []float64{1, 2, 1000}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.xs); got != tc.want {
				t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestMedianLeavesInputAlone(t *testing.T) {
	xs := []float64{3, 1, 2}
	median(xs)
	percentile(xs, 50)
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("input reordered: %v", xs)
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100 .. 1, unsorted
	}
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"none", nil, 50, 0},
		{"one value is every percentile", []float64{7}, 99, 7},
		{"p50 of 1..100 is 50 (nearest rank)", hundred, 50, 50},
		{"p99 of 1..100 is 99", hundred, 99, 99},
		{"p100 is the maximum", hundred, 100, 100},
		{"p0 is the minimum", hundred, 0, 1},
		{"p99 of 10 values is the largest", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
		{"p50 of 4 values is the 2nd, not an interpolation", []float64{10, 20, 30, 40}, 50, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.xs, tc.p); got != tc.want {
				t.Errorf("percentile(p%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("1000x10, 50000x5")
	if err != nil || len(got) != 2 || got[0] != (size{services: 1000, endpoints: 10}) || got[1] != (size{services: 50000, endpoints: 5}) {
		t.Errorf("parseSizes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1000", "x10", "1000x0", "ax5"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q): no error", bad)
		}
	}
}
