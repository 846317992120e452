package nft

import (
	"fmt"
	"iter"
)

func addElements(s *Set, elems []Element) error {
	have := map[string]Element{}
	for _, e := range s.Elements {
		have[keyText(s, e)] = e
	}
	for _, e := range elems {
		key := keyText(s, e)
		if old, ok := have[key]; ok {
			if old.Verdict != e.Verdict {
				return fmt.Errorf("element %s in %s: %w", key, s.Name, ErrExists)
			}
			continue
		}
		have[key] = e
		s.Elements = append(s.Elements, e)
	}
	s.SortElements()
	return nil
}

func deleteElements(s *Set, elems []Element) error {
	gone := map[string]bool{}
	for _, e := range elems {
		gone[keyText(s, e)] = true
	}
	kept := s.Elements[:0:0]
	for _, e := range s.Elements {
		if gone[keyText(s, e)] {
			delete(gone, keyText(s, e))
			continue
		}
		kept = append(kept, e)
	}
	for key := range gone {
		return fmt.Errorf("element %s in %s: %w", key, s.Name, ErrNotFound)
	}
	s.Elements = kept
	return nil
}

func keyText(s *Set, e Element) string { return s.KeyText(e.Key) }

// referencedChains returns the chains that rules or map elements point at.
func referencedChains(t *Table) map[string]bool {
	refs := map[string]bool{}
	for s := range statements(t) {
		if v, ok := s.(Verdict); ok && v.Chain != "" {
			refs[v.Chain] = true
		}
	}
	for _, s := range t.Sets {
		for _, e := range s.Elements {
			if e.Verdict.Chain != "" {
				refs[e.Verdict.Chain] = true
			}
		}
	}
	return refs
}

// referencedSets returns the sets that rules look up.
func referencedSets(t *Table) map[string]bool {
	refs := map[string]bool{}
	for s := range statements(t) {
		switch m := s.(type) {
		case InSet:
			refs[m.Set] = true
		case DNATMap:
			refs[m.Map] = true
		case UpdateSet:
			refs[m.Set] = true
		case Vmap:
			refs[m.Map] = true
		}
	}
	return refs
}

// checkReferences is the commit-time check: every chain and set that is
// pointed at exists, as the kernel requires.
func checkReferences(rs Ruleset) error {
	for _, t := range rs {
		for name := range referencedChains(t) {
			if t.Chain(name) == nil {
				return fmt.Errorf("%s %s: chain %s: %w", t.Family, t.Name, name, ErrNotFound)
			}
		}
		for name := range referencedSets(t) {
			if t.Set(name) == nil {
				return fmt.Errorf("%s %s: set %s: %w", t.Family, t.Name, name, ErrNotFound)
			}
		}
		for name := range referencedCounters(t) {
			if t.Counter(name) == nil {
				return fmt.Errorf("%s %s: counter %s: %w", t.Family, t.Name, name, ErrNotFound)
			}
		}
	}
	return nil
}

// referencedCounters returns the counter objects that rules count into.
func referencedCounters(t *Table) map[string]bool {
	refs := map[string]bool{}
	for s := range statements(t) {
		if ci, ok := s.(CountInto); ok {
			refs[ci.Counter] = true
		}
	}
	return refs
}

// statements returns every statement of the rules of t.
func statements(t *Table) iter.Seq[Stmt] {
	return func(yield func(Stmt) bool) {
		for _, c := range t.Chains {
			for _, r := range c.Rules {
				for _, s := range r.Stmts {
					if !yield(s) {
						return
					}
				}
			}
		}
	}
}
