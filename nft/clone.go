package nft

import "slices"

// Clone returns a deep copy: tables, chains, sets and their contents.
func (rs Ruleset) Clone() Ruleset {
	if rs == nil {
		return nil
	}
	out := make(Ruleset, len(rs))
	for f, t := range rs {
		out[f] = t.Clone()
	}
	return out
}

// Clone returns a deep copy of t. Rules and elements are copied by value;
// their statements are immutable values shared by both copies.
func (t *Table) Clone() *Table {
	c := &Table{Family: t.Family, Name: t.Name, Comment: t.Comment, Counters: slices.Clone(t.Counters)}
	c.Sets = make([]*Set, len(t.Sets))
	for i, s := range t.Sets {
		cs := *s
		cs.Elements = slices.Clone(s.Elements)
		c.Sets[i] = &cs
	}
	c.Chains = make([]*Chain, len(t.Chains))
	for i, ch := range t.Chains {
		cc := *ch
		cc.Rules = slices.Clone(ch.Rules)
		c.Chains[i] = &cc
	}
	return c
}
