package compile

import (
	"slices"
	"sort"

	"github.com/nftproxy/nftproxy/nft"
)

// Ruleset assembles the whole desired ruleset: one table for each family
// that the node or any Service uses.
func (c *Tables) Ruleset() nft.Ruleset {
	rs := nft.Ruleset{}
	for fi, fs := range c.fams {
		if fs.used() {
			rs[fs.family] = c.table(fi)
		}
	}
	return rs
}

// table assembles family fi's table: the fixed skeleton, the node's
// addresses, every unit's chains and the elements that are wanted, each
// set sorted.
func (c *Tables) table(fi int) *nft.Table {
	t := c.assemble(fi)
	for _, s := range t.Sets {
		s.SortElements()
	}
	return t
}

// assemble is table without sorting the elements.
func (c *Tables) assemble(fi int) *nft.Table {
	fs := c.fams[fi]
	t := c.frame(fi)
	byName := make(map[string]*nft.Set, len(t.Sets))
	for _, s := range t.Sets {
		byName[s.Name] = s
	}
	// The endpoint maps hold most of the table's elements (127,000 of
	// 190,000 at 10,000 x 10): sized once rather than grown by doubling.
	for m := range listMaps {
		for _, n := range fs.rungs.inUse(m) {
			s := byName[listMapName(m, n)]
			s.Elements = slices.Grow(s.Elements, fs.rungs.elements(m, n))
		}
	}
	add := func(set string, e nft.Element) error {
		byName[set].Elements = append(byName[set].Elements, e)
		return nil
	}
	for _, se := range fs.shared {
		if se.count > 0 {
			_ = add(se.claim.set, se.claim.element())
		}
	}
	for _, ct := range fs.contests {
		if w := ct.winner; w != nil {
			_ = w.elements(add)
		}
	}
	return t
}

// frame is family fi's table without the elements Services claim: the
// fixed skeleton, the node's addresses, the ServiceCIDRs, the endpoint
// maps and pick chains of the list lengths in use and every unit's chains.
func (c *Tables) frame(fi int) *nft.Table {
	fs := c.fams[fi]
	t := skeleton(fs.family, c.opts)
	for _, ip := range c.opts.nodePortIPs(c.node, fs.family) {
		addUnique(t.Set(nft.SetNodePortIPs), nft.Element{Key: []nft.Value{{Addr: ip}}})
	}
	t.Set(nft.SetNodePortIPs).SortElements()
	t.Set(nft.SetServiceCIDRs).Elements = slices.Clone(fs.cidrs)
	t.Set(nft.SetServiceCIDRs).SortElements()
	t.Sets = append(t.Sets, fs.rungs.sets(fs.family)...)
	t.Chains = append(t.Chains, fs.rungs.chains(c.opts)...)
	var chains []*nft.Chain
	for _, u := range c.units {
		chains = append(chains, u.families[fi].chains...)
	}
	sort.Slice(chains, func(i, j int) bool { return chains[i].Name < chains[j].Name })
	t.Chains = append(t.Chains, chains...)
	return t
}

// addUnique adds e to s unless s has an element with the same key.
func addUnique(s *nft.Set, e nft.Element) {
	text := s.KeyText(e.Key)
	for _, o := range s.Elements {
		if s.KeyText(o.Key) == text {
			return
		}
	}
	s.Elements = append(s.Elements, e)
}
