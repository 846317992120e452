package tracker

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestSnapshotIncremental checks the copied-and-patched snapshots against
// ones built from scratch, and that a snapshot taken earlier never changes
// unless it was released, over random sequences of adds, updates and
// deletes, with the snapshot before the last released at random (as the
// agent releases its previous one).
func TestSnapshotIncremental(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			tr := New(t0)
			svcs, sls := map[string]*model.Service{}, map[string]*model.EndpointSlice{}
			type taken struct {
				snap     *model.Snapshot
				want     model.Snapshot
				released bool
			}
			var all []taken
			for step := range 200 {
				name := fmt.Sprintf("s%d", r.IntN(12))
				switch r.IntN(4) {
				case 0:
					tr.SetService("ns/"+name, nil)
					delete(svcs, "ns/"+name)
				case 1:
					s := svc(name, uint16(r.IntN(3)+80))
					tr.SetService("ns/"+name, s)
					svcs["ns/"+name] = s
				case 2:
					tr.SetSlice("ns/"+name+"-1", nil, time.Time{})
					delete(sls, "ns/"+name+"-1")
				case 3:
					s := slice(name+"-1", name, fmt.Sprintf("10.0.0.%d", r.IntN(3)+1))
					tr.SetSlice("ns/"+name+"-1", s, time.Time{})
					sls["ns/"+name+"-1"] = s
				}
				if step%3 == 0 {
					tk := taken{snap: tr.Take().Snapshot, want: scratch(svcs, sls)}
					if diff := cmp.Diff(tk.want, *tk.snap, cmpopts.EquateComparable(netip.Addr{}), cmpopts.EquateEmpty()); diff != "" {
						t.Fatalf("step %d: snapshot (-want +got):\n%s", step, diff)
					}
					all = append(all, tk)
					// Released: the one before the last, and so every one
					// sharing an array with it (the caller holds none).
					if n := len(all); n >= 2 && r.IntN(2) == 0 && !all[n-2].released {
						tr.Release(all[n-2].snap)
						for i := range all[:n-1] {
							if shares(all[i].snap, all[n-2].snap) {
								all[i].released = true
							}
						}
					}
				}
			}
			for i, tk := range all {
				if tk.released {
					continue
				}
				if diff := cmp.Diff(tk.want, *tk.snap, cmpopts.EquateComparable(netip.Addr{}), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("snapshot %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// scratch is the snapshot of svcs and sls built from scratch, in key order.
func scratch(svcs map[string]*model.Service, sls map[string]*model.EndpointSlice) model.Snapshot {
	var s model.Snapshot
	for _, k := range slices.Sorted(maps.Keys(svcs)) {
		s.Services = append(s.Services, *svcs[k])
	}
	for _, k := range slices.Sorted(maps.Keys(sls)) {
		s.Slices = append(s.Slices, *sls[k])
	}
	return s
}

// shares reports whether a and b share an array.
func shares(a, b *model.Snapshot) bool {
	return sameArray(a.Services, b.Services) || sameArray(a.Slices, b.Slices)
}

func sameArray[T any](a, b []T) bool { return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0] }
