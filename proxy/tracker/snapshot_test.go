package tracker

import (
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestSnapshotIncremental checks the copied-and-patched snapshots against
// ones built from scratch, and that a snapshot taken earlier never changes
// unless it was released, over random sequences of adds, updates and
// deletes, with the snapshot before the last released at random (as the
// agent releases its previous one).
func TestSnapshotIncremental(t *testing.T) {
	synth.Histories(t, 8, 0, func(t *testing.T, g *synth.Random) {
		tr := New(t0)
		svcs, sls := map[string]*model.Service{}, map[string]*model.EndpointSlice{}
		type taken struct {
			snap     *model.Snapshot
			want     model.Snapshot
			released bool
		}
		var all []taken
		for step := range 200 {
			if step%20 == 0 || len(g.Snap.Services) < 3 {
				g.AddService()
			} else {
				g.Mutate()
			}
			feed(tr, g.Snap, svcs, sls)
			if step%3 == 0 {
				tk := taken{snap: tr.Take().Snapshot, want: scratch(svcs, sls)}
				if diff := cmp.Diff(tk.want, *tk.snap, cmpopts.EquateComparable(netip.Addr{}, netip.Prefix{}), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("step %d: snapshot (-want +got):\n%s", step, diff)
				}
				all = append(all, tk)
				// Released: the one before the last, and so every one
				// sharing an array with it (the caller holds none).
				if n := len(all); n >= 2 && g.IntN(2) == 0 && !all[n-2].released {
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
			if diff := cmp.Diff(tk.want, *tk.snap, cmpopts.EquateComparable(netip.Addr{}, netip.Prefix{}), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("snapshot %d (-want +got):\n%s", i, diff)
			}
		}
	})
}

// feed records in tr, and in svcs and sls, every Service and EndpointSlice
// of cur that is not the one they hold, and the deletion of every one cur
// lacks. The values are copies: cur's arrays change with the next Mutate.
func feed(tr *Tracker, cur *model.Snapshot, svcs map[string]*model.Service, sls map[string]*model.EndpointSlice) {
	now := map[string]bool{}
	for _, s := range cur.Services {
		now[s.Key()] = true
		if old, ok := svcs[s.Key()]; !ok || !reflect.DeepEqual(*old, s) {
			tr.SetService(s.Key(), &s)
			svcs[s.Key()] = &s
		}
	}
	for k := range svcs {
		if !now[k] {
			tr.SetService(k, nil)
			delete(svcs, k)
		}
	}
	for _, sl := range cur.Slices {
		k := sl.Namespace + "/" + sl.Name
		now[k] = true
		if old, ok := sls[k]; !ok || !reflect.DeepEqual(*old, sl) {
			tr.SetSlice(k, &sl, time.Time{})
			sls[k] = &sl
		}
	}
	for k := range sls {
		if !now[k] {
			tr.SetSlice(k, nil, time.Time{})
			delete(sls, k)
		}
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
