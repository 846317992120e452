package trace_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// TestSteps: with Options.Steps each outcome lists the rules that matched,
// with the hook and what their lookups found; rules that did not match are
// left out, and outcomes reached by different rules stay apart.
func TestSteps(t *testing.T) {
	tbl := withSets(table(
		baseChain("pre", "filter", "prerouting", 0,
			rule(nft.InSet{Keys: []nft.Field{nft.Daddr, nft.Saddr}, Set: "pairs"}, mark(0x1)), // no match
			rule(nft.InSet{Keys: []nft.Field{nft.Saddr, nft.Daddr}, Set: "pairs"}, mark(0x2)),
			rule(nft.Vmap{Keys: []nft.Field{nft.L4Proto, nft.Dport}, Map: "ports"})),
		chain("j", rule(nft.Random{Mod: 2, Below: 1}, drop), rule(accept)),
		baseChain("fwd", "filter", "forward", 0, rule(mark(0x4)))), pairs, ports)
	opts := fromNetwork
	opts.Steps = true
	outs, err := trace.Trace(tbl, pkt, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, o := range outs {
		var steps []string
		for _, s := range o.Steps {
			steps = append(steps, s.String())
		}
		got = append(got, append([]string{o.Prob.RatString() + " " + o.Verdict.String()}, steps...))
	}
	want := [][]string{{
		"1/2 accept",
		"prerouting pre #1 @pairs[10.0.0.1 . 10.0.0.2]",
		"prerouting pre #2 @ports[6 . 80]",
		"prerouting j #1",
		"forward fwd #0",
	}, {
		"1/2 drop",
		"prerouting pre #1 @pairs[10.0.0.1 . 10.0.0.2]",
		"prerouting pre #2 @ports[6 . 80]",
		"prerouting j #0",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	opts.Steps = false
	if outs, _ := trace.Trace(tbl, pkt, opts); len(outs) != 2 || outs[0].Steps != nil {
		t.Errorf("without Options.Steps: %d outcomes, steps %v; want 2, none", len(outs), outs[0].Steps)
	}
}
