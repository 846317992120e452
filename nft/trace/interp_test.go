package trace_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// Hand-built tables that pin down the interpreter's semantics, independent
// of what the compiler emits.

func table(chains ...*nft.Chain) *nft.Table {
	return &nft.Table{Family: nft.IPv4, Name: "t", Chains: chains}
}

func baseChain(name, typ, hook string, prio int, rules ...[]nft.Stmt) *nft.Chain {
	c := chain(name, rules...)
	c.Base = &nft.Base{Type: typ, Hook: hook, Priority: prio}
	return c
}

func chain(name string, rules ...[]nft.Stmt) *nft.Chain {
	c := &nft.Chain{Name: name}
	for _, r := range rules {
		c.Rules = append(c.Rules, nft.Rule{Stmts: r})
	}
	return c
}

func rule(stmts ...nft.Stmt) []nft.Stmt { return stmts }

func mark(bits uint32) nft.SetMark { return nft.SetMark{Op: nft.MarkOr, Bits: bits} }

var (
	accept = nft.Verdict{Kind: nft.Accept}
	ret    = nft.Verdict{Kind: nft.Return}
	drop   = nft.Verdict{Kind: nft.Drop}
	// pkt is a TCP packet from 10.0.0.1 to 10.0.0.2:80.
	pkt = packet(addr("10.0.0.1"), addr("10.0.0.2"), nft.ProtoTCP, 80)
)

// hookMarks is a table whose filter chain on each hook sets its own mark
// bit, so that an outcome's mark tells which hooks ran.
func hookMarks() *nft.Table {
	return table(
		baseChain("pre", "filter", "prerouting", 0, rule(mark(0x1))),
		baseChain("in", "filter", "input", 0, rule(mark(0x2))),
		baseChain("fwd", "filter", "forward", 0, rule(mark(0x4))),
		baseChain("out", "filter", "output", 0, rule(mark(0x8))),
		baseChain("post", "filter", "postrouting", 0, rule(mark(0x10))),
	)
}

// show renders outcomes compactly for comparison.
func show(outs []trace.Outcome) []string {
	var out []string
	for _, o := range outs {
		out = append(out, fmt.Sprintf("%s %s %s mark=%#x masq=%t local=%t [%s]", o.Prob.RatString(), o.Verdict,
			o.Dest(), o.Mark, o.Masqueraded, o.Local, strings.Join(o.Chains, " ")))
	}
	return out
}

// tableCase traces pkt through a hand-built table.
type tableCase struct {
	name  string
	table *nft.Table
	opts  trace.Options
	want  []string
}

func runTableCases(t *testing.T, cases []tableCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outs, err := trace.Trace(tc.table, pkt, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, show(outs)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

var (
	toLocal     = trace.Options{From: trace.FromNetwork, LocalAddrs: []netip.Addr{addr("10.0.0.2")}}
	hostToLocal = trace.Options{From: trace.FromHost, LocalAddrs: toLocal.LocalAddrs}
)

var semanticsCases = []tableCase{{
	name: "forwarded: prerouting, forward, postrouting", table: hookMarks(), opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x15 masq=false local=false [pre fwd post]"},
}, {
	name: "delivered: prerouting, input", table: hookMarks(), opts: toLocal,
	want: []string{"1 accept 10.0.0.2:80 mark=0x3 masq=false local=true [pre in]"},
}, {
	name: "sent by the host: output, postrouting", table: hookMarks(), opts: fromHost,
	want: []string{"1 accept 10.0.0.2:80 mark=0x18 masq=false local=false [out post]"},
}, {
	name: "sent by the host to itself: output, postrouting, then loopback", table: hookMarks(), opts: hostToLocal,
	want: []string{"1 accept 10.0.0.2:80 mark=0x1b masq=false local=true [out post pre in]"},
}, {
	name: "base chains run by priority, not table order",
	table: table(
		baseChain("late", "filter", "prerouting", 0, rule(nft.MatchMarkClear{Bits: 1}, mark(0x2))),
		baseChain("early", "filter", "prerouting", -10, rule(mark(0x1)))),
	opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x1 masq=false local=false [early late]"},
}, {
	name: "accept ends the base chain, not the hook",
	table: table(
		baseChain("a", "filter", "prerouting", -10, rule(accept), rule(mark(0x1))),
		baseChain("b", "filter", "prerouting", 0, rule(ret), rule(mark(0x1))),
		baseChain("c", "filter", "prerouting", 10, rule(mark(0x2)))),
	opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x2 masq=false local=false [a b c]"},
}, {
	name: "drop ends the trace",
	table: table(
		baseChain("a", "filter", "prerouting", -10, rule(mark(0x1), drop)),
		baseChain("b", "filter", "prerouting", 0, rule(mark(0x2)))),
	opts: fromNetwork,
	want: []string{"1 drop 10.0.0.2:80 mark=0x1 masq=false local=false [a]"},
}, {
	name: "jump returns to the next rule; goto's return skips the caller's rest",
	table: table(
		baseChain("base", "filter", "prerouting", 0, rule(nft.JumpTo("a"), mark(0x100)), rule(mark(0x1))),
		chain("a", rule(nft.GotoChain("b")), rule(mark(0x200))),
		chain("b", rule(mark(0x2), ret), rule(mark(0x400)))),
	opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x3 masq=false local=false [base a b]"},
}, {
	name: "random: both branches, exact probabilities",
	table: table(baseChain("base", "filter", "prerouting", 0,
		rule(nft.Random{Mod: 4, Below: 3}, mark(0x1)),
		rule(nft.Random{Mod: 5, Below: 0}, mark(0x2)),
		rule(nft.Random{Mod: 2, Below: 7}, mark(0x4)))),
	opts: fromNetwork,
	want: []string{
		"1/4 accept 10.0.0.2:80 mark=0x4 masq=false local=false [base]",
		"3/4 accept 10.0.0.2:80 mark=0x5 masq=false local=false [base]",
	},
}, {
	name: "identical outcomes merge",
	table: table(baseChain("base", "filter", "prerouting", 0,
		rule(nft.Random{Mod: 3, Below: 1}, accept), rule(nft.Random{Mod: 2, Below: 1}, accept))),
	opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x0 masq=false local=false [base]"},
}, {
	name: "matches",
	table: table(baseChain("base", "filter", "prerouting", 0,
		rule(nft.MatchAddr{Field: nft.Saddr, Prefix: netip.MustParsePrefix("10.0.0.0/24")}, mark(0x1)),
		rule(nft.MatchAddr{Field: nft.Daddr, Neg: true, Prefix: netip.MustParsePrefix("10.0.0.2/32")}, mark(0x2)),
		rule(nft.MatchAddr{Field: nft.Daddr, Neg: true, Prefix: netip.MustParsePrefix("10.0.1.0/24")}, mark(0x4)),
		rule(nft.MatchProto{Proto: nft.ProtoUDP}, mark(0x8)),
		rule(nft.MatchProto{Proto: nft.ProtoTCP}, nft.MatchPort{Port: 80}, nft.MatchNew{}, mark(0x10)),
		rule(nft.MatchPort{Port: 81}, mark(0x20)),
		rule(nft.MatchMarkClear{Bits: 0x1}, mark(0x40)),
		rule(nft.MatchMarkClear{Bits: 0x2}, nft.SetMark{Op: nft.MarkXor, Bits: 0x11}, mark(0x80)))),
	opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x84 masq=false local=false [base]"},
}}

func TestSemantics(t *testing.T) { runTableCases(t, semanticsCases) }
