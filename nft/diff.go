package nft

import (
	"reflect"
)

// Diff returns the plan that turns the committed ruleset into the desired
// one. A nil committed ruleset (unknown kernel state) gives a full plan.
//
// A table whose fixed structure changed (its sets' types, its base chains)
// is replaced whole: the plan adds the table, deletes it and adds it again
// with everything in it, inside the one transaction, so that no packet sees a
// missing or half-built table. Otherwise only the changed chains are flushed
// and refilled and only the changed elements are added or deleted.
func Diff(committed, desired Ruleset) *Plan {
	p := &Plan{Full: committed == nil}
	for _, f := range Families {
		p.Append(diffTable(f, committed[f], desired[f], committed == nil))
	}
	return p
}

// DiffTable returns the operations that turn family f's table old into
// want, as Diff does for one family of a known ruleset: nil old adds want
// whole, nil want deletes old.
func DiffTable(f Family, old, want *Table) []Op {
	return diffTable(f, old, want, false)
}

// Append adds the operations on one table to the plan. Operations that
// rebuild a table from scratch make the plan Full.
func (p *Plan) Append(ops []Op) {
	p.Full = p.Full || replaces(ops)
	if p.Ops == nil {
		p.Ops = ops // no copy of a whole table's ops (see replaceTable)
		return
	}
	p.Ops = append(p.Ops, ops...)
}

// replaces reports whether ops rebuild a table from scratch.
func replaces(ops []Op) bool {
	return len(ops) > 2 && ops[1].Kind == DeleteTable && ops[2].Kind == AddTable
}

// diffTable returns the operations on family f's table. A full plan also
// deletes a table nobody wants, since the kernel may hold one we don't know.
func diffTable(f Family, old, want *Table, full bool) []Op {
	switch {
	case want == nil && (old != nil || full):
		return deleteTable(f)
	case want == nil:
		return nil
	case old == nil || full || !sameStructure(old, want):
		return replaceTable(want)
	}
	return patchTable(old, want)
}

// deleteTable deletes our table of family f. Adding it first makes the
// delete succeed whether or not the table exists.
func deleteTable(f Family) []Op {
	return []Op{
		{Kind: AddTable, Family: f, Table: &Table{Family: f, Name: TableName}},
		{Kind: DeleteTable, Family: f, Name: TableName},
	}
}

// replaceTable adds the whole table after deleting whatever is there.
// Elements are added before the rules that reference their sets: binding a
// set to a rule is cheap, but adding elements to a bound map revalidates
// every binding (docs/ruleset.md).
func replaceTable(t *Table) []Op {
	f := t.Family
	// Sized up front: a first sync at 10,000 Services has 140,000 ops,
	// and growing the slice by doubling would allocate twice that. The
	// two spare ops take the other family's deleteTable (a full plan on a
	// single-stack node) without copying these.
	n := 3 + len(t.Counters) + 2*len(t.Sets) + len(t.Chains) + 2
	for _, c := range t.Chains {
		n += len(c.Rules)
	}
	ops := append(make([]Op, 0, n), deleteTable(f)...)
	ops = append(ops, Op{Kind: AddTable, Family: f, Table: t})
	for i := range t.Counters {
		ops = append(ops, Op{Kind: AddCounter, Family: f, Counter: &t.Counters[i]})
	}
	for _, s := range t.Sets {
		ops = append(ops, Op{Kind: AddSet, Family: f, Set: s})
	}
	for _, c := range t.Chains {
		ops = append(ops, Op{Kind: AddChain, Family: f, Chain: c})
	}
	for _, s := range t.Sets {
		if len(s.Elements) > 0 {
			ops = append(ops, Op{Kind: AddElements, Family: f, Name: s.Name, Set: s, Elements: s.Elements})
		}
	}
	for _, c := range t.Chains {
		for i := range c.Rules {
			ops = append(ops, Op{Kind: AddRule, Family: f, Name: c.Name, Rule: &c.Rules[i]})
		}
	}
	return ops
}

func ruleOps(f Family, c *Chain) []Op {
	ops := make([]Op, len(c.Rules))
	for i := range c.Rules {
		ops[i] = Op{Kind: AddRule, Family: f, Name: c.Name, Rule: &c.Rules[i]}
	}
	return ops
}

// sameStructure reports whether old and want agree on everything a patch
// cannot change: the table's identity, the definitions of the sets both
// have and its base chains. A patch adds and deletes sets (the endpoint
// maps come and go with the list lengths in use), but the kernel cannot
// change a set's definition.
func sameStructure(old, want *Table) bool {
	if old.Name != want.Name || old.Comment != want.Comment || !sameCounters(old, want) {
		return false
	}
	for _, s := range want.Sets {
		if o := old.Set(s.Name); o != nil && !sameSetDef(o, s) {
			return false
		}
	}
	oldBase, wantBase := baseChainsOf(old), baseChainsOf(want)
	return reflect.DeepEqual(oldBase, wantBase)
}

func baseChainsOf(t *Table) map[string]Base {
	out := map[string]Base{}
	for _, c := range t.Chains {
		if c.Base != nil {
			out[c.Name] = *c.Base
		}
	}
	return out
}
