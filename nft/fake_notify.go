package nft

import "context"

// subscriberBuffer is how many announcements a Fake subscriber may fall
// behind before the Fake drops them and announces a loss, as the kernel
// does when a receive buffer overflows.
const subscriberBuffer = 256

// Subscribe announces the plans applied with Foreign, and the losses made
// with Lose; the Fake's own Apply is not announced, like ours to the
// kernel's subscribers.
func (f *Fake) Subscribe(ctx context.Context) (<-chan Commit, error) {
	ch := make(chan Commit, subscriberBuffer)
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	f.mu.Unlock()
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, c := range f.subs {
			if c == ch {
				f.subs = append(f.subs[:i], f.subs[i+1:]...)
				close(ch)
				return
			}
		}
	}()
	return ch, nil
}

// Foreign applies p as somebody else's transaction: whatever the
// generation, atomically, and announced to subscribers with what it changed
// in the order the kernel announces it.
func (f *Fake) Foreign(p *Plan) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	work := f.Ruleset.Clone()
	var changes []Change
	for i, op := range p.Ops {
		changes = append(changes, changesOf(work, op)...)
		if err := applyOp(work, op); err != nil {
			return &OpError{Index: i, Op: op, Err: err}
		}
	}
	if err := checkReferences(work); err != nil {
		return &OpError{Index: -1, Err: err}
	}
	f.Ruleset = work
	f.Gen = NextGeneration(f.Gen)
	f.announce(Commit{Gen: f.Gen, Changes: changes})
	return nil
}

// Unannounced commits fn's change to the ruleset as a transaction whose
// announcement never reaches the subscribers (it was dropped): the
// generation moves, nothing is announced.
func (f *Fake) Unannounced(fn func(Ruleset)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.Ruleset)
	f.Gen = NextGeneration(f.Gen)
}

// Lose announces that announcements were dropped.
func (f *Fake) Lose() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.announce(Commit{Lost: true})
}

// announce sends c to every subscriber; one that has fallen too far behind
// gets nothing more until it has room for a loss.
func (f *Fake) announce(c Commit) {
	for _, ch := range f.subs {
		if len(ch) >= cap(ch)-1 {
			select {
			case ch <- Commit{Lost: true}:
			default:
			}
			continue
		}
		ch <- c
	}
}

// changesOf returns what op will change in rs, as the kernel announces
// it: deleting a table announces its rules, sets and chains going first.
func changesOf(rs Ruleset, op Op) []Change {
	t := rs[op.Family]
	if t == nil && op.Kind != AddTable {
		return nil // the operation fails
	}
	one := func(k ChangeKind, name string) []Change { return []Change{{Kind: k, Family: op.Family, Name: name}} }
	switch op.Kind {
	case AddTable:
		if t == nil {
			return one(TableAdded, "")
		}
	case DeleteTable:
		return tableDeletion(t)
	case AddSet:
		if t != nil && t.Set(op.Set.Name) == nil {
			return one(SetAdded, op.Set.Name)
		}
	case DeleteSet:
		return one(SetDeleted, op.Name)
	case AddChain:
		if t != nil && t.Chain(op.Chain.Name) == nil {
			return []Change{{Kind: ChainAdded, Family: op.Family, Name: op.Chain.Name, Base: op.Chain.Base != nil}}
		}
	case AddCounter:
		if t != nil && t.Counter(op.Counter.Name) == nil {
			return one(CounterAdded, op.Counter.Name)
		}
	case DeleteChain:
		return one(ChainDeleted, op.Name)
	case FlushChain:
		return ruleDeletions(op.Family, t.Chain(op.Name))
	case AddRule:
		return one(RuleAdded, op.Name)
	case AddElements, DeleteElements:
		return elementChanges(t, op)
	}
	return nil
}

func tableDeletion(t *Table) []Change {
	if t == nil {
		return nil
	}
	var out []Change
	for _, c := range t.Chains {
		out = append(out, ruleDeletions(t.Family, c)...)
	}
	for _, s := range t.Sets {
		out = append(out, Change{Kind: SetDeleted, Family: t.Family, Name: s.Name})
	}
	for _, c := range t.Counters {
		out = append(out, Change{Kind: CounterDeleted, Family: t.Family, Name: c.Name})
	}
	for _, c := range t.Chains {
		out = append(out, Change{Kind: ChainDeleted, Family: t.Family, Name: c.Name, Base: c.Base != nil})
	}
	return append(out, Change{Kind: TableDeleted, Family: t.Family})
}

func ruleDeletions(f Family, c *Chain) []Change {
	if c == nil {
		return nil
	}
	out := make([]Change, len(c.Rules))
	for i := range out {
		out[i] = Change{Kind: RuleDeleted, Family: f, Name: c.Name}
	}
	return out
}

// elementChanges announces each element added that was not there (once),
// and each element deleted.
func elementChanges(t *Table, op Op) []Change {
	s := t.Set(op.Name)
	if s == nil {
		return nil
	}
	have := map[string]bool{}
	for _, e := range s.Elements {
		have[s.KeyText(e.Key)] = true
	}
	var out []Change
	for _, e := range op.Elements {
		kind := ElementDeleted
		if op.Kind == AddElements {
			if have[s.KeyText(e.Key)] {
				continue
			}
			have[s.KeyText(e.Key)] = true
			kind = ElementAdded
		}
		out = append(out, Change{Kind: kind, Family: t.Family, Name: s.Name, Element: &e})
	}
	return out
}
