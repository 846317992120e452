package nft

import (
	"fmt"
	"slices"
	"sync"
)

// Fake is an in-memory Applier that is atomic like the kernel: it applies a
// plan to a copy of its ruleset and keeps the copy only if every operation
// and the final reference check succeed.
type Fake struct {
	Ruleset Ruleset
	// FailAt makes the plan's operation with this index fail (for tests of
	// failure handling); -1 or unset (0 with FailErr nil) disables it.
	FailAt  int
	FailErr error
	// Transactions counts committed plans; LastOps is the size of the last.
	Transactions int
	LastOps      int
	// Gen is the ruleset generation: like the kernel's, it starts at 1,
	// moves with every committed transaction and is never 0. A test that
	// changes Ruleset behind the applier's back (an external change) bumps
	// it too.
	Gen uint32

	mu   sync.Mutex // for the methods, which a Dataplane's watcher calls too
	subs []chan Commit
}

var (
	_ Applier  = (*Fake)(nil)
	_ Reader   = (*Fake)(nil)
	_ Notifier = (*Fake)(nil)
)

// NewFake returns a Fake with an empty ruleset.
func NewFake() *Fake { return &Fake{Ruleset: Ruleset{}, FailAt: -1, Gen: 1} }

// Read returns a copy of the committed ruleset.
func (f *Fake) Read() (Ruleset, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Ruleset.Clone(), nil
}

// Generation returns the ruleset generation.
func (f *Fake) Generation() (uint32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Gen, nil
}

// Apply applies p atomically. Like the kernel, it refuses a plan made from
// another generation than the current one with a *ConflictError, and sends
// nothing for an empty plan: no commit, no new generation.
func (f *Fake) Apply(p *Plan) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.Empty() {
		return nil
	}
	if p.Gen != 0 && p.Gen != f.Gen {
		return &ConflictError{Gen: p.Gen}
	}
	work := f.Ruleset.Clone()
	for i, op := range p.Ops {
		err := applyOp(work, op)
		if f.FailErr != nil && i == f.FailAt {
			err = f.FailErr
		}
		if err != nil {
			return &OpError{Index: i, Op: op, Err: err}
		}
	}
	if err := checkReferences(work); err != nil {
		return &OpError{Index: -1, Err: err}
	}
	f.Ruleset = work
	f.Gen = NextGeneration(f.Gen)
	f.Transactions++
	f.LastOps = len(p.Ops)
	return nil
}

func applyOp(rs Ruleset, op Op) error {
	t := rs[op.Family]
	if t == nil && op.Kind != AddTable {
		return fmt.Errorf("table %s %s: %w", op.Family, TableName, ErrNotFound)
	}
	switch op.Kind {
	case AddTable:
		if t == nil {
			rs[op.Family] = &Table{Family: op.Family, Name: op.Table.Name, Comment: op.Table.Comment}
		}
	case DeleteTable:
		delete(rs, op.Family)
	case AddSet:
		if t.Set(op.Set.Name) == nil {
			t.Sets = append(t.Sets, op.Set.definition())
		}
	case DeleteSet:
		return deleteSet(t, op.Name)
	case AddCounter:
		if t.Counter(op.Counter.Name) == nil {
			t.Counters = append(t.Counters, *op.Counter)
		}
	case AddChain:
		if t.Chain(op.Chain.Name) == nil {
			t.Chains = append(t.Chains, &Chain{Name: op.Chain.Name, Base: op.Chain.Base})
		}
	default:
		return applyContentOp(t, op)
	}
	return nil
}

func applyContentOp(t *Table, op Op) error {
	switch op.Kind {
	case FlushChain, AddRule:
		c := t.Chain(op.Name)
		if c == nil {
			return fmt.Errorf("chain %s: %w", op.Name, ErrNotFound)
		}
		if op.Kind == FlushChain {
			c.Rules = nil
		} else {
			c.Rules = append(c.Rules, *op.Rule)
		}
	case DeleteChain:
		return deleteChain(t, op.Name)
	case AddElements, DeleteElements:
		s := t.Set(op.Name)
		if s == nil {
			return fmt.Errorf("set %s: %w", op.Name, ErrNotFound)
		}
		if op.Kind == AddElements {
			return addElements(s, op.Elements)
		}
		return deleteElements(s, op.Elements)
	}
	return nil
}

func deleteSet(t *Table, name string) error {
	i := slices.IndexFunc(t.Sets, func(s *Set) bool { return s.Name == name })
	if i < 0 {
		return fmt.Errorf("set %s: %w", name, ErrNotFound)
	}
	if referencedSets(t)[name] {
		return fmt.Errorf("set %s is in use: %w", name, ErrBusy)
	}
	t.Sets = slices.Delete(t.Sets, i, i+1)
	return nil
}

func deleteChain(t *Table, name string) error {
	i := slices.IndexFunc(t.Chains, func(c *Chain) bool { return c.Name == name })
	if i < 0 {
		return fmt.Errorf("chain %s: %w", name, ErrNotFound)
	}
	if len(t.Chains[i].Rules) > 0 || referencedChains(t)[name] {
		return fmt.Errorf("chain %s is in use: %w", name, ErrBusy)
	}
	t.Chains = slices.Delete(t.Chains, i, i+1)
	return nil
}
