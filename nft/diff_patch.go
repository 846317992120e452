package nft

// patchTable returns the operations that turn old into want when both have
// the same structure. The order keeps every step valid for the kernel:
// elements that point at a chain go before the chain, a chain is flushed
// before it is deleted, a set is deleted once no rule looks it up, and a
// chain or set exists before rules or elements point at it. A new set's
// elements go in before the rules that look it up, as in replaceTable.
func patchTable(old, want *Table) []Op {
	f := want.Family
	oldChains, wantChains := chainIndex(old), chainIndex(want)
	var ops []Op
	added := map[string][]Element{}
	for _, s := range want.Sets {
		if old.Set(s.Name) == nil {
			continue
		}
		del, add := diffElements(old.Set(s.Name), s)
		if len(del) > 0 {
			ops = append(ops, Op{Kind: DeleteElements, Family: f, Name: s.Name, Set: s, Elements: del})
		}
		added[s.Name] = add
	}
	var removed []string
	for _, c := range old.Chains {
		w, keep := wantChains[c.Name]
		switch {
		case !keep:
			removed = append(removed, c.Name)
			ops = append(ops, Op{Kind: FlushChain, Family: f, Name: c.Name})
		case !sameRules(c, w):
			ops = append(ops, Op{Kind: FlushChain, Family: f, Name: c.Name})
		}
	}
	for _, name := range removed {
		ops = append(ops, Op{Kind: DeleteChain, Family: f, Name: name})
	}
	for _, s := range old.Sets {
		if want.Set(s.Name) == nil {
			ops = append(ops, Op{Kind: DeleteSet, Family: f, Name: s.Name})
		}
	}
	var newSets []*Set
	for _, s := range want.Sets {
		if old.Set(s.Name) == nil {
			newSets = append(newSets, s)
			ops = append(ops, Op{Kind: AddSet, Family: f, Set: s})
		}
	}
	for _, c := range want.Chains {
		if _, ok := oldChains[c.Name]; !ok {
			ops = append(ops, Op{Kind: AddChain, Family: f, Chain: c})
		}
	}
	for _, s := range newSets {
		if len(s.Elements) > 0 {
			ops = append(ops, Op{Kind: AddElements, Family: f, Name: s.Name, Set: s, Elements: s.Elements})
		}
	}
	for _, c := range want.Chains {
		if o, ok := oldChains[c.Name]; !ok || !sameRules(o, c) {
			ops = append(ops, ruleOps(f, c)...)
		}
	}
	for _, s := range want.Sets {
		if add := added[s.Name]; len(add) > 0 {
			ops = append(ops, Op{Kind: AddElements, Family: f, Name: s.Name, Set: s, Elements: add})
		}
	}
	return ops
}

func chainIndex(t *Table) map[string]*Chain {
	idx := make(map[string]*Chain, len(t.Chains))
	for _, c := range t.Chains {
		idx[c.Name] = c
	}
	return idx
}

// diffElements returns the elements of old that want lacks (or maps
// differently) and the elements of want that old lacks. A changed verdict is
// a delete and an add: the kernel has no element update. The elements of a
// dynamic set belong to the packet path (session affinity), never to us.
func diffElements(old, want *Set) (del, add []Element) {
	if want.Dynamic {
		return nil, nil
	}
	oldIdx := map[string]Element{}
	if old != nil {
		for _, e := range old.Elements {
			oldIdx[old.ElementText(e)] = e
		}
	}
	wantIdx := make(map[string]bool, len(want.Elements))
	for _, e := range want.Elements {
		text := want.ElementText(e)
		wantIdx[text] = true
		if _, ok := oldIdx[text]; !ok {
			add = append(add, e)
		}
	}
	if old != nil {
		for _, e := range old.Elements {
			if !wantIdx[old.ElementText(e)] {
				del = append(del, e)
			}
		}
	}
	return del, add
}
