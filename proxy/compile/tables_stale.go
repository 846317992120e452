package compile

import (
	"slices"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Stale recompiles every Service of snap, one at a time, and returns the
// keys ("namespace/name") whose compiled output differs from what c holds,
// with those of Services c holds that snap no longer has. Passed to Update,
// they bring c to exactly the state New(snap) would build, which
// is what a periodic full resync needs when no change may have been
// missed; but at most one fresh unit is alive at a time, where New
// next to the old Tables holds two compiled clusters (and two tables to
// diff) at once.
//
// A Service whose Service value and EndpointSlices are the very values its
// unit was compiled from is not compiled again: compiling is a pure
// function of them, the node and the options, so its unit cannot differ.
// This relies on what the tracker guarantees: a changed object is a new
// value, and model values are never modified in place (input.go). A resync
// that compiled every Service, every syncPeriod, delayed the changes
// waiting behind it; it now compiles only what changed.
func (c *Tables) Stale(snap *model.Snapshot) map[string]bool {
	idx := indexSlices(snap.Slices)
	comp := &compiler{opts: c.opts, node: c.node, slices: idx}
	stale := map[string]bool{}
	seen := make(map[string]bool, len(snap.Services))
	for i := range snap.Services {
		key := snap.Services[i].Key()
		if seen[key] {
			continue // a duplicate: the first one counts
		}
		seen[key] = true
		old := c.units[key]
		if old != nil && old.in.same(&snap.Services[i], idx[key]) {
			continue
		}
		if old == nil || !sameUnit(old, comp.compileService(&snap.Services[i])) {
			stale[key] = true
		}
	}
	for key := range c.units {
		if !seen[key] {
			stale[key] = true
		}
	}
	return stale
}

// sameUnit reports whether two units of one Service program the same.
func sameUnit(a, b *unit) bool {
	if a.uses != b.uses || !slices.Equal(a.problems, b.problems) {
		return false
	}
	for fi := range a.families {
		x, y := a.families[fi], b.families[fi]
		if x.noLocal != y.noLocal || !slices.Equal(x.claims, y.claims) || !slices.EqualFunc(x.chains, y.chains, (*nft.Chain).Equal) {
			return false
		}
	}
	return true
}
