package nft

import "sort"

// Ruleset assembles the whole desired ruleset: one table for each family
// that the node or any Service uses.
func (c *Compiled) Ruleset() Ruleset {
	rs := Ruleset{}
	for fi, fs := range c.fams {
		if fs.used() {
			rs[fs.family] = c.table(fi)
		}
	}
	return rs
}

// table assembles family fi's table: the fixed skeleton, the node's
// addresses, every unit's chains and the elements that are wanted.
func (c *Compiled) table(fi int) *Table {
	fs := c.fams[fi]
	t := skeleton(fs.family, c.opts)
	for _, ip := range c.opts.nodePortIPs(c.node, fs.family) {
		addUnique(t.Set(setNodePortIPs), Element{Key: []Value{{Addr: ip}}})
	}
	byName := make(map[string]*Set, len(t.Sets))
	for _, s := range t.Sets {
		byName[s.Name] = s
	}
	for _, se := range fs.shared {
		if se.count > 0 {
			byName[se.claim.set].Elements = append(byName[se.claim.set].Elements, se.claim.element())
		}
	}
	for _, ct := range fs.contests {
		if w := ct.winner; w != nil {
			byName[w.set].Elements = append(byName[w.set].Elements, w.element())
		}
	}
	var chains []*Chain
	for _, u := range c.units {
		chains = append(chains, u.families[fi].chains...)
	}
	sort.Slice(chains, func(i, j int) bool { return chains[i].Name < chains[j].Name })
	t.Chains = append(t.Chains, chains...)
	for _, s := range t.Sets {
		s.SortElements()
	}
	return t
}

// skeleton returns family f's fixed structure: every set and map, empty,
// the base chains and the chains whose rules depend only on Options.
func skeleton(f Family, o Options) *Table {
	t := &Table{Family: f, Name: TableName}
	for _, spec := range sets {
		t.Sets = append(t.Sets, spec.set(f))
	}
	for _, bc := range baseChains {
		base := bc.base
		ch := &Chain{Name: bc.name, Base: &base}
		for _, stmts := range bc.rules {
			ch.Rules = append(ch.Rules, Rule{Stmts: stmts})
		}
		t.Chains = append(t.Chains, ch)
	}
	t.Chains = append(t.Chains, fixedChains(f, o)...)
	if !o.MasqueradeAll && len(o.localCIDRs(f)) > 0 {
		t.Chains = append(t.Chains, nonClusterChain(f, o))
	}
	return t
}

// addUnique adds e to s unless s has an element with the same key.
func addUnique(s *Set, e Element) {
	text := s.KeyText(e.Key)
	for _, o := range s.Elements {
		if s.KeyText(o.Key) == text {
			return
		}
	}
	s.Elements = append(s.Elements, e)
}
