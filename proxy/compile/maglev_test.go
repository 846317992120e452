package compile

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func maglevEndpoints(n int) []endpoint {
	eps := make([]endpoint, n)
	base := netip.MustParseAddr("10.244.0.0").As4()
	for i := range eps {
		a := base
		a[2], a[3] = byte(i>>8), byte(i)
		eps[i] = endpoint{addr: netip.AddrFrom4(a), port: 8080}
	}
	return eps
}

// TestMaglevTable checks the table's contract for each size: every slot
// holds an endpoint, each endpoint holds its share of slots within one
// (Maglev's round robin), and removing one endpoint changes at most 1/n +
// 2% of the slots, with the smallest of the table sizes docs/ruleset.md
// lists that keeps that bound for n (M > 100 n is not always enough: at n =
// 10 and M = 1021 the worst removal moves 12.6%).
func TestMaglevTable(t *testing.T) {
	for _, tc := range []struct {
		n int
		m uint32
	}{{2, 251}, {3, 1021}, {10, 4093}, {100, 16381}} {
		t.Run(fmt.Sprintf("n=%d,m=%d", tc.n, tc.m), func(t *testing.T) {
			eps := maglevEndpoints(tc.n)
			table := maglevTable(eps, tc.m)
			if len(table) != int(tc.m) {
				t.Fatalf("%d slots, want %d", len(table), tc.m)
			}
			share := map[endpoint]int{}
			for _, ep := range table {
				share[ep]++
			}
			lo, hi := int(tc.m)/tc.n, (int(tc.m)+tc.n-1)/tc.n
			for _, ep := range eps {
				if share[ep] < lo || share[ep] > hi {
					t.Errorf("%v holds %d slots, want %d to %d", ep, share[ep], lo, hi)
				}
			}
			for gone := range tc.n {
				rest := slices.Delete(slices.Clone(eps), gone, gone+1)
				after := maglevTable(rest, tc.m)
				moved := 0
				for j := range table {
					if table[j] != after[j] {
						moved++
					}
				}
				if limit := float64(tc.m) * (1/float64(tc.n) + 0.02); float64(moved) > limit {
					t.Errorf("removing endpoint %d moved %d of %d slots, more than %.0f", gone, moved, tc.m, limit)
				}
			}
		})
	}
}

// TestMaglevTableDeterministic: the table depends on the endpoints alone,
// so nodes that list them in another order (candidates sorts them) fill
// the same table, and a table from no endpoints is empty.
func TestMaglevTableDeterministic(t *testing.T) {
	eps := maglevEndpoints(5)
	want := maglevTable(eps, 101)
	if diff := cmp.Diff(want, maglevTable(slices.Clone(eps), 101), cmp.AllowUnexported(endpoint{}),
		cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("second fill (-want +got):\n%s", diff)
	}
	if got := maglevTable(nil, 101); got != nil {
		t.Errorf("table of no endpoints = %v, want nil", got)
	}
}
