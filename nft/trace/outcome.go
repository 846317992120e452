package trace

import (
	"cmp"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strings"
)

// Verdict is what finally happens to a packet.
type Verdict int

// The final verdicts.
const (
	Accept Verdict = iota // it leaves the hooks: delivered locally or sent on
	Drop
	Reject // dropped, and the sender told (ICMP unreachable)
)

func (v Verdict) String() string {
	switch v {
	case Accept:
		return "accept"
	case Drop:
		return "drop"
	default:
		return "reject"
	}
}

// Outcome is one way a packet can go, with its probability.
type Outcome struct {
	Prob    *big.Rat
	Verdict Verdict
	// Daddr and Dport are the destination after DNAT (unchanged without).
	Daddr netip.Addr
	Dport uint16
	// Masqueraded is set when postrouting masqueraded the packet.
	Masqueraded bool
	// Local is set when the packet was delivered to the node (input hook).
	Local bool
	// Mark is the packet mark when the trace ended.
	Mark uint32
	// Chains are the chains entered, in order, across all hooks.
	Chains []string
	// Steps are the rules that matched, in order, across all hooks: only
	// when Options.Steps asked for them.
	Steps []Step
	// Counter is the counter object the packet was counted into, "" for
	// none: for a drop or reject, the counter of its reason.
	Counter string
}

// Dest returns the destination after DNAT.
func (o Outcome) Dest() netip.AddrPort { return netip.AddrPortFrom(o.Daddr, o.Dport) }

func (o Outcome) String() string {
	masq := ""
	if o.Masqueraded {
		masq = " masquerade"
	}
	return fmt.Sprintf("%s %s %s%s via %s", o.Prob.RatString(), o.Verdict, o.Dest(), masq, strings.Join(o.Chains, ","))
}

func outcomeOf(w *walker) Outcome {
	v := Accept
	switch w.end {
	case drop:
		v = Drop
	case reject:
		v = Reject
	}
	return Outcome{Prob: w.prob, Verdict: v, Daddr: w.daddr, Dport: w.dport,
		Masqueraded: w.masq, Local: w.local, Mark: w.mark, Chains: w.chains, Steps: w.steps, Counter: w.counter}
}

// merge turns walkers into outcomes, adding up the probabilities of
// outcomes that are the same in everything else, sorted by destination.
func merge(ws []*walker) []Outcome {
	var out []Outcome
	index := map[string]int{}
	for _, w := range ws {
		o := outcomeOf(w)
		key := o.identity()
		if i, ok := index[key]; ok {
			out[i].Prob = new(big.Rat).Add(out[i].Prob, o.Prob)
			continue
		}
		index[key] = len(out)
		out = append(out, o)
	}
	slices.SortFunc(out, compareOutcomes)
	return out
}

func (o Outcome) identity() string {
	return fmt.Sprintf("%d %s %t %t %d %q %s %s", o.Verdict, o.Dest(), o.Masqueraded, o.Local, o.Mark, o.Chains, stepsText(o.Steps), o.Counter)
}

func compareOutcomes(a, b Outcome) int {
	return cmp.Or(
		a.Daddr.Compare(b.Daddr),
		cmp.Compare(a.Dport, b.Dport),
		cmp.Compare(a.Verdict, b.Verdict),
		cmp.Compare(a.identity(), b.identity()),
	)
}

// Result is an Outcome without the details of how it came about.
type Result struct {
	Verdict     Verdict
	Dest        netip.AddrPort
	Masqueraded bool
}

func (r Result) String() string {
	s := r.Verdict.String() + " " + r.Dest.String()
	if r.Masqueraded {
		s += " masquerade"
	}
	return s
}

// Summary adds up the probabilities of outcomes by Result.
func Summary(outs []Outcome) map[Result]*big.Rat {
	m := map[Result]*big.Rat{}
	for _, o := range outs {
		add(m, Result{o.Verdict, o.Dest(), o.Masqueraded}, o.Prob)
	}
	return m
}

// Destinations adds up the probabilities of accepted outcomes by
// destination (after DNAT).
func Destinations(outs []Outcome) map[netip.AddrPort]*big.Rat {
	m := map[netip.AddrPort]*big.Rat{}
	for _, o := range outs {
		if o.Verdict == Accept {
			add(m, o.Dest(), o.Prob)
		}
	}
	return m
}

// Probability adds up the probabilities of the outcomes for which pred
// holds.
func Probability(outs []Outcome, pred func(Outcome) bool) *big.Rat {
	sum := new(big.Rat)
	for _, o := range outs {
		if pred(o) {
			sum.Add(sum, o.Prob)
		}
	}
	return sum
}

func add[K comparable](m map[K]*big.Rat, k K, p *big.Rat) {
	if m[k] == nil {
		m[k] = new(big.Rat)
	}
	m[k].Add(m[k], p)
}
