package tracker

import (
	"maps"
	"reflect"
	"slices"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// A snapshot is copied, not rebuilt: a sync under endpoint churn takes one
// every second, and sorting the keys of every Service and slice each time
// was most of a one-endpoint sync and of the agent's CPU under churn
// (docs/benchmarks.md, Profiling). The keys are sorted again
// only when one is added or removed; otherwise the previous snapshot's
// arrays are copied and the objects that changed are replaced in place,
// found by binary search. An array nothing in changed is shared with the
// previous snapshot: snapshots are never modified, so sharing is safe.
//
// Even a copy is a new array each sync, fresh pages to fault in, which at
// 50,000 Services was most of a one-endpoint sync. A
// user that is done with a snapshot hands it back (Release); when it is the
// one before the last, its arrays become the next snapshot's, patched with
// what changed in the two snapshots since: the agent, which keeps the
// previous snapshot for its hooks, copies nothing.

// store is one kind of object (Services or EndpointSlices) by key, with
// what the last snapshots held of it.
type store[T any] struct {
	objs map[string]*T
	// keys are the keys of the last snapshot, sorted; last and prev are the
	// arrays of the last two snapshots (the same array when nothing
	// changed in between); spare is prev, handed back, for the next.
	keys              []string
	last, prev, spare []T
	// resort: a key was added or removed since the last snapshot. dirty:
	// keys whose object changed since (present in keys and in objs).
	resort bool
	dirty  map[string]bool
	// lastResort and lastDirty are resort and dirty of the last snapshot:
	// what changed from prev to last.
	lastResort bool
	lastDirty  map[string]bool
}

func newStore[T any]() store[T] {
	return store[T]{objs: map[string]*T{}, dirty: map[string]bool{}, lastDirty: map[string]bool{}, resort: true}
}

// set records obj under key (nil deletes it).
func (s *store[T]) set(key string, obj *T) {
	_, had := s.objs[key]
	if !had && obj == nil {
		return
	}
	if obj == nil {
		delete(s.objs, key)
	} else {
		s.objs[key] = obj
	}
	if had != (obj != nil) {
		s.resort = true
		return
	}
	s.dirty[key] = true
}

// replace records obj under key, as set does, unless it equals what key
// holds. It returns what key held and whether obj replaced it.
func (s *store[T]) replace(key string, obj *T) (old *T, replaced bool) {
	old = s.objs[key]
	if reflect.DeepEqual(old, obj) {
		return old, false
	}
	s.set(key, obj)
	return old, true
}

// snapshot returns the objects in key order.
func (s *store[T]) snapshot() []T {
	if !s.resort && len(s.dirty) == 0 && s.last != nil {
		return s.last // nothing changed: shared
	}
	var next []T
	switch {
	case s.resort:
		s.keys = slices.Sorted(maps.Keys(s.objs))
		next = make([]T, len(s.keys))
		for i, k := range s.keys {
			next[i] = *s.objs[k]
		}
	case s.spare != nil && !s.lastResort:
		next = s.spare // as of prev: patch what changed since
		s.patch(next, s.lastDirty)
		s.patch(next, s.dirty)
	default:
		next = slices.Clone(s.last)
		s.patch(next, s.dirty)
	}
	s.prev, s.last, s.spare = s.last, next, nil
	s.lastResort, s.resort = s.resort, false
	s.lastDirty, s.dirty = s.dirty, s.lastDirty
	clear(s.dirty)
	return next
}

// patch writes the current objects of keys into arr, which holds the
// snapshot's keys in order.
func (s *store[T]) patch(arr []T, keys map[string]bool) {
	for k := range keys {
		i, _ := slices.BinarySearch(s.keys, k)
		arr[i] = *s.objs[k]
	}
}

// release takes back arr, an array of a snapshot no longer used: kept for
// the next snapshot when it is the one before the last, and not shared
// with the last.
func (s *store[T]) release(arr []T) {
	if len(arr) > 0 && len(arr) == len(s.prev) && &arr[0] == &s.prev[0] && (len(s.last) == 0 || &arr[0] != &s.last[0]) {
		s.spare = s.prev
	}
}

// Release hands back a snapshot that nobody reads any more: its arrays may
// be reused for a later snapshot, so the caller must hold no reference to
// it, nor to anything from its Services or Slices arrays.
func (t *Tracker) Release(snap *model.Snapshot) {
	if snap == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services.release(snap.Services)
	t.slices.release(snap.Slices)
}
