package compile

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Update brings c to snap, where only the Services named in changed
// ("namespace/name": Services created, deleted or changed, or whose
// EndpointSlices changed) and the ServiceCIDRs differ from the snapshot c
// was built or last updated from. It recompiles those Services only and
// returns the plan that turns the tables c described before into the ones
// it describes now: their chains, the elements they claim, the elements
// other Services win or lose because of them, and the service-cidrs
// elements that changed.
func (c *Tables) Update(snap *model.Snapshot, changed map[string]bool) *nft.Plan {
	c.order.update(snap, changed)
	keys := make([]string, 0, len(changed))
	for k := range changed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	comp := &compiler{opts: c.opts, node: c.node, slices: slicesOf(snap.Slices, changed)}
	olds, news := make([]*unit, len(keys)), make([]*unit, len(keys))
	for i, key := range keys {
		olds[i] = c.units[key]
		if pos, ok := c.order.of(key); ok {
			news[i] = comp.compileService(&snap.Services[pos])
		}
		c.setUnit(key, news[i])
	}
	p := &nft.Plan{}
	for fi := range c.fams {
		p.Append(c.updateFamily(fi, olds, news, snap.ServiceCIDRs))
	}
	return p
}

// slicesOf indexes the EndpointSlices of the changed Services only. It
// reads every slice of the cluster, so it compares each with the changed
// Services by name and namespace without building a key: hashing the name
// into a map when many Services changed, comparing it with each when few
// did (a one-endpoint sync), where hashing every slice's name costs more
// than comparing it.
func slicesOf(all []model.EndpointSlice, changed map[string]bool) map[string][]*model.EndpointSlice {
	want := make([]nsName, 0, len(changed))
	byName := make(map[string][]nsName, len(changed))
	for key := range changed {
		ns, name, _ := strings.Cut(key, "/")
		want = append(want, nsName{ns, name})
		byName[name] = append(byName[name], nsName{ns, name})
	}
	idx := map[string][]*model.EndpointSlice{}
	add := func(w nsName, s *model.EndpointSlice) {
		key := w.namespace + "/" + w.name
		idx[key] = append(idx[key], s)
	}
	for i := range all {
		s := &all[i]
		candidates := want
		if len(want) > 8 {
			candidates = byName[s.Service]
		}
		for _, w := range candidates {
			if w.name == s.Service && w.namespace == s.Namespace {
				add(w, s)
			}
		}
	}
	return idx
}

// updateFamily replaces the units olds by news in family fi and returns
// the operations on its table. The diff is taken between two partial
// tables that hold only what the change touches: the chains of the changed
// Services and the elements whose presence or winner may have changed.
func (c *Tables) updateFamily(fi int, olds, news []*unit, cidrs []model.ServiceCIDR) []nft.Op {
	fs := c.fams[fi]
	was := fs.used()
	before, after := partialTable(fs.family), partialTable(fs.family)
	owned, shared := touchedKeys(fi, olds, news)
	for key := range fs.contested {
		owned[key] = true
	}
	winners := fs.winners(owned)
	counts := fs.counts(shared)
	picks := fs.rungs.chains(c.opts)
	before.Sets = append(before.Sets, fs.rungs.sets(fs.family)...)
	for i := range olds {
		if olds[i] != nil {
			before.Chains = append(before.Chains, olds[i].families[fi].chains...)
			fs.remove(olds[i], fi)
		}
		if news[i] != nil {
			after.Chains = append(after.Chains, news[i].families[fi].chains...)
			fs.add(news[i], fi)
		}
	}
	fs.settleOwned(owned, winners, &c.order, before, after)
	fs.settleShared(shared, counts, before, after)
	fs.changedPickChains(picks, c.opts, before, after)
	addMissing(after, fs.rungs.sets(fs.family))
	fs.settleCIDRs(serviceCIDRs(cidrs, fs.family), before, after)
	// Both partial tables have every set and no base chain: the differ
	// patches one into the other.
	now := fs.used()
	switch {
	case !was && !now:
		return nil
	case !now:
		return nft.DiffTable(fs.family, before, nil) // deletes the table
	case !was:
		return nft.DiffTable(fs.family, nil, c.table(fi)) // adds it whole
	}
	return nft.DiffTable(fs.family, before, after)
}

// touchedKeys returns the exclusive and the shared keys that the units
// claim in family fi.
func touchedKeys(fi int, units ...[]*unit) (owned, shared map[string]bool) {
	owned, shared = map[string]bool{}, map[string]bool{}
	for _, us := range units {
		for _, u := range us {
			if u == nil {
				continue
			}
			for _, cl := range u.families[fi].claims {
				if cl.owner == "" {
					shared[cl.key] = true
				} else {
					owned[cl.key] = true
				}
			}
		}
	}
	return owned, shared
}

func (fs *familyState) winners(keys map[string]bool) map[string]*claim {
	out := make(map[string]*claim, len(keys))
	for key := range keys {
		if ct := fs.contests[key]; ct != nil {
			out[key] = ct.winner
		}
	}
	return out
}

func (fs *familyState) counts(keys map[string]bool) map[string]int {
	out := make(map[string]int, len(keys))
	for key := range keys {
		if se := fs.shared[key]; se != nil {
			out[key] = se.count
		}
	}
	return out
}

// settleOwned settles the contests over keys again and puts each key's
// previous winner's element in before and its new winner's in after.
func (fs *familyState) settleOwned(keys map[string]bool, prev map[string]*claim, order *order, before, after *nft.Table) {
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		ct := fs.contests[key]
		var now *claim
		if ct != nil && len(ct.claims) == 0 {
			delete(fs.contests, key)
		} else if ct != nil {
			ct.settle(order)
			now = ct.winner
		}
		was := prev[key]
		if sameClaim(was, now) {
			continue
		}
		fs.rungs.add(was, -1)
		fs.rungs.add(now, 1)
		if was != nil {
			was.addTo(before)
		}
		if now != nil {
			now.addTo(after)
		}
	}
}

// changedPickChains puts each pick chain that changed since prev, was
// added or is gone, in before (as it was) and after (as it is now).
func (fs *familyState) changedPickChains(prev []*nft.Chain, o Options, before, after *nft.Table) {
	now := fs.rungs.chains(o)
	was := make(map[string]*nft.Chain, len(prev))
	for _, ch := range prev {
		was[ch.Name] = ch
	}
	for _, ch := range now {
		if w := was[ch.Name]; w == nil || !w.Equal(ch) {
			after.Chains = append(after.Chains, ch)
			if w != nil {
				before.Chains = append(before.Chains, w)
			}
		}
		delete(was, ch.Name)
	}
	for _, ch := range prev {
		if was[ch.Name] != nil {
			before.Chains = append(before.Chains, ch)
		}
	}
}

// addMissing adds to t each of sets it has no set of that name of: the
// endpoint maps in use whose elements did not change.
func addMissing(t *nft.Table, sets []*nft.Set) {
	for _, s := range sets {
		if t.Set(s.Name) == nil {
			t.Sets = append(t.Sets, s)
		}
	}
}

// settleShared puts each shared element that existed in before and each
// that exists now in after; an element nobody adds any more is forgotten.
func (fs *familyState) settleShared(keys map[string]bool, prev map[string]int, before, after *nft.Table) {
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		se := fs.shared[key]
		set, elem := se.claim.set, se.claim.element()
		if prev[key] > 0 {
			before.Set(set).Elements = append(before.Set(set).Elements, elem)
		}
		if se.count > 0 {
			after.Set(set).Elements = append(after.Set(set).Elements, elem)
		} else {
			delete(fs.shared, key)
		}
	}
}

// settleCIDRs makes cidrs the service-cidrs elements and, when they
// changed, puts the old ones in before and the new ones in after.
func (fs *familyState) settleCIDRs(cidrs []nft.Element, before, after *nft.Table) {
	if !sameCIDRs(fs.cidrs, cidrs) {
		before.Set(nft.SetServiceCIDRs).Elements = fs.cidrs
		after.Set(nft.SetServiceCIDRs).Elements = cidrs
	}
	fs.cidrs = cidrs
}

func sameCIDRs(a, b []nft.Element) bool {
	return slices.EqualFunc(a, b, func(x, y nft.Element) bool { return x.Key[0].Prefix == y.Key[0].Prefix })
}

// ServiceCIDRsChanged reports whether snap's ServiceCIDRs program other
// service-cidrs elements than c holds: a change for Update even when no
// Service changed.
func (c *Tables) ServiceCIDRsChanged(snap *model.Snapshot) bool {
	for _, fs := range c.fams {
		if !sameCIDRs(fs.cidrs, serviceCIDRs(snap.ServiceCIDRs, fs.family)) {
			return true
		}
	}
	return false
}

// sameClaim reports whether two winning claims program the same element.
func sameClaim(a, b *claim) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.set == b.set && a.key == b.key && a.verdict == b.verdict && a.data == b.data && a.lists == b.lists &&
		a.comment == b.comment
}
