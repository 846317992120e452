package trace

import (
	"fmt"
	"math/big"
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/nft"
)

// maxDepth is the kernel's NFT_JUMP_STACK_SIZE: it refuses a table where
// jumps and gotos nest deeper than this from a base chain.
const maxDepth = 16

// end is how a walker left a rule or chain.
type end int

const (
	next   end = iota // the rule ended without a verdict: go on with the next rule
	ret               // return to the calling chain (or the policy of a base chain)
	accept            // accepted: the packet goes on to the next base chain
	drop
	reject
)

// walker is one branch of the evaluation: the packet as it is on this
// branch and the probability of the branch.
type walker struct {
	prob    *big.Rat
	daddr   netip.Addr
	dport   uint16
	mark    uint32
	masq    bool
	local   bool
	natDone [2]bool // per manip
	chains  []string
	end     end
	// found is the element the last lookup of the current rule found, in
	// the set called foundSet.
	found    nft.Element
	foundSet string
	steps    []Step // when Options.Steps
	// counter is the counter object the packet was last counted into.
	counter string
}

// fork splits off a copy of w that is taken with probability q; w keeps the
// rest of its probability.
func (w *walker) fork(q *big.Rat) *walker {
	c := *w
	c.chains, c.steps = slices.Clone(w.chains), slices.Clone(w.steps)
	c.prob = new(big.Rat).Mul(w.prob, q)
	w.prob = new(big.Rat).Sub(w.prob, c.prob)
	return &c
}

// copyWith returns a copy of w with probability p; w is unchanged.
func (w *walker) copyWith(p *big.Rat) *walker {
	c := *w
	c.chains, c.steps = slices.Clone(w.chains), slices.Clone(w.steps)
	c.prob = p
	return &c
}

// tracer holds what does not change along a trace.
type tracer struct {
	table     *nft.Table
	saddr     netip.Addr
	sport     uint16
	proto     uint8
	baseChain *nft.Base // the base chain being evaluated, for statement validation
	hookName  string    // the hook being evaluated, for steps
	opts      Options
	indexes   map[*nft.Set]map[string]int // see index
}

// loc names a rule in errors.
type loc struct {
	chain string
	rule  int
}

func (l loc) errorf(format string, args ...any) error {
	return fmt.Errorf("trace: chain %s, rule %d: %s", l.chain, l.rule, fmt.Sprintf(format, args...))
}

// base runs base chain c: returning from it, or reaching its end, applies
// the policy, accept.
func (t *tracer) base(c *nft.Chain, w *walker) ([]*walker, error) {
	t.baseChain = c.Base
	outs, err := t.chain(c, w, 0)
	for _, o := range outs {
		if o.end == ret {
			o.end = accept
		}
	}
	return outs, err
}

// chain runs c for w. Every walker it returns has end ret, accept, drop or
// reject.
func (t *tracer) chain(c *nft.Chain, w *walker, depth int) ([]*walker, error) {
	w.chains = append(w.chains, c.Name)
	live, done := []*walker{w}, []*walker(nil)
	for i := range c.Rules {
		var cont []*walker
		for _, lw := range live {
			lw.saw("", nft.Element{})
			outs, err := t.stmts(loc{c.Name, i}, c.Rules[i].Stmts, lw, depth)
			if err != nil {
				return nil, err
			}
			for _, o := range outs {
				if o.end == next {
					cont = append(cont, o)
				} else {
					done = append(done, o)
				}
			}
		}
		live = cont
	}
	for _, lw := range live {
		lw.end = ret
	}
	return append(done, live...), nil
}

// stmts evaluates a rule's statements from left to right.
func (t *tracer) stmts(at loc, stmts []nft.Stmt, w *walker, depth int) ([]*walker, error) {
	for i, s := range stmts {
		switch s := s.(type) {
		case nft.Random:
			return t.random(at, s, stmts[i+1:], w, depth)
		case nft.InSet:
			return t.inSetThen(at, s, stmts[i+1:], w, depth)
		case nft.DNATMap:
			return t.dnatMap(at, s, w)
		}
		outs, stop, err := t.stmt(at, s, w, depth)
		if err != nil || stop {
			return outs, err
		}
	}
	t.step(at, w)
	w.end = next
	return []*walker{w}, nil
}

// random follows both outcomes of a `numgen random mod Mod < Below` match:
// the rest of the rule with probability Below/Mod, the next rule otherwise.
func (t *tracer) random(at loc, r nft.Random, rest []nft.Stmt, w *walker, depth int) ([]*walker, error) {
	if r.Mod == 0 {
		return nil, at.errorf("numgen random mod 0")
	}
	q := big.NewRat(int64(min(r.Below, r.Mod)), int64(r.Mod))
	if q.Sign() == 0 {
		w.end = next
		return []*walker{w}, nil
	}
	if q.IsInt() { // Below >= Mod: always matches
		return t.stmts(at, rest, w, depth)
	}
	hit := w.fork(q)
	w.end = next
	outs, err := t.stmts(at, rest, hit, depth)
	return append(outs, w), err
}

// inSetThen follows a set lookup: the rest of the rule for the walkers
// whose key is found, the next rule for the others.
func (t *tracer) inSetThen(at loc, m nft.InSet, rest []nft.Stmt, w *walker, depth int) ([]*walker, error) {
	hit, miss, err := t.inSet(at, m, w)
	if err != nil {
		return nil, err
	}
	outs := miss
	for _, h := range hit {
		o, err := t.stmts(at, rest, h, depth)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o...)
	}
	return outs, nil
}

// stmt evaluates one statement other than Random, InSet and DNATMap. When stop is false the
// rule goes on with w; otherwise outs are where w went.
func (t *tracer) stmt(at loc, s nft.Stmt, w *walker, depth int) (outs []*walker, stop bool, err error) {
	var ok bool
	switch s := s.(type) {
	case nft.MatchAddr:
		ok, err = t.matchAddr(at, s, w)
	case nft.MatchProto:
		ok = t.proto == s.Proto
	case nft.MatchPort:
		ok = w.dport == s.Port
	case nft.MatchNew:
		ok = true // every traced packet starts a connection
	case nft.MatchInvalid:
		ok = false // a traced packet is the first of a valid connection
	case nft.MatchMarkClear:
		ok = w.mark&s.Bits == 0
	case nft.SetMark:
		ok = true
		w.mark = setMark(w.mark, s)
	case nft.Vmap:
		outs, err = t.vmap(at, s, w, depth)
		return outs, true, err
	case nft.Verdict:
		t.step(at, w)
		outs, err = t.verdict(at, s, w, depth)
		return outs, true, err
	case nft.MatchFibLocal:
		ok = t.opts.isLocal(t.saddr)
	case nft.UpdateSet:
		ok, err = true, t.checkUpdate(at, s, w)
	case nft.CountInto:
		if t.table.Counter(s.Counter) == nil {
			return nil, true, at.errorf("counter %q: no such counter object", s.Counter)
		}
		ok, w.counter = true, s.Counter
	case nft.DNAT, nft.Masquerade, nft.Reject:
		outs, err = t.terminal(at, s, w)
		return outs, true, err
	default: // nft.Foreign and anything added later
		return nil, true, at.errorf("cannot evaluate %T %v", s, s)
	}
	if err != nil || ok {
		return nil, false, err
	}
	w.end = next
	return []*walker{w}, true, nil
}

func setMark(mark uint32, s nft.SetMark) uint32 {
	if s.Op == nft.MarkXor {
		return mark ^ s.Bits
	}
	return mark | s.Bits
}

// vmap looks w up in a verdict map and applies the verdict found; a lookup
// that finds nothing ends the rule, like a failed match.
func (t *tracer) vmap(at loc, m nft.Vmap, w *walker, depth int) ([]*walker, error) {
	elem, found, err := t.lookup(at, m.Map, m.Keys, w, true)
	if err != nil || !found {
		w.end = next
		return []*walker{w}, err
	}
	w.saw(m.Map, elem)
	t.step(at, w)
	return t.verdict(at, elem.Verdict, w, depth)
}

// verdict applies v to w.
func (t *tracer) verdict(at loc, v nft.Verdict, w *walker, depth int) ([]*walker, error) {
	switch v.Kind {
	case nft.Jump, nft.Goto:
		return t.call(at, v, w, depth)
	case nft.Return:
		w.end = ret
	case nft.Accept:
		w.end = accept
	case nft.Drop:
		w.end = drop
	default:
		return nil, at.errorf("unknown verdict kind %d", v.Kind)
	}
	return []*walker{w}, nil
}

// call runs the chain a jump or goto names. A jump comes back to the next
// rule; a goto replaced the calling chain, so returning from its target
// returns from the caller too.
func (t *tracer) call(at loc, v nft.Verdict, w *walker, depth int) ([]*walker, error) {
	c := t.table.Chain(v.Chain)
	switch {
	case c == nil:
		return nil, at.errorf("%s: no such chain", v)
	case c.Base != nil:
		return nil, at.errorf("%s: cannot jump to a base chain", v)
	case depth+1 > maxDepth:
		return nil, at.errorf("%s: chains nest deeper than %d (a loop?)", v, maxDepth)
	}
	outs, err := t.chain(c, w, depth+1)
	if err != nil {
		return nil, err
	}
	if v.Kind == nft.Jump {
		for _, o := range outs {
			if o.end == ret {
				o.end = next
			}
		}
	}
	return outs, nil
}
