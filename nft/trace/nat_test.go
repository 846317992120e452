package trace_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

func withSets(t *nft.Table, sets ...*nft.Set) *nft.Table {
	t.Sets = sets
	return t
}

// pairs is a set of saddr . daddr holding 10.0.0.1 . 10.0.0.2.
var pairs = &nft.Set{Name: "pairs", Key: []nft.DataType{nft.TypeIPv4Addr, nft.TypeIPv4Addr},
	Elements: []nft.Element{{Key: []nft.Value{{Addr: addr("10.0.0.1")}, {Addr: addr("10.0.0.2")}}}}}

// ports is a verdict map on l4proto . dport: tcp . 80 jumps to "j".
var ports = &nft.Set{Name: "ports", Map: true, Key: []nft.DataType{nft.TypeInetProto, nft.TypeInetService},
	Elements: []nft.Element{{Key: []nft.Value{{Num: 6}, {Num: 80}}, Verdict: nft.JumpTo("j")}}}

// empty is a verdict map on l4proto . dport without elements.
var empty = &nft.Set{Name: "empty", Map: true, Key: []nft.DataType{nft.TypeInetProto, nft.TypeInetService}}

func dnat(a string, port uint16) nft.DNAT {
	return nft.DNAT{Proto: nft.ProtoTCP, Addr: addr(a), Port: port}
}

var natCases = []tableCase{{
	name: "set lookup on a concatenation; vmap hit jumps, miss goes on",
	table: withSets(table(
		baseChain("base", "filter", "prerouting", 0,
			rule(nft.InSet{Keys: []nft.Field{nft.Saddr, nft.Daddr}, Set: "pairs"}, mark(0x1)),
			rule(nft.InSet{Keys: []nft.Field{nft.Daddr, nft.Saddr}, Set: "pairs"}, mark(0x2)),
			rule(nft.Vmap{Keys: []nft.Field{nft.L4Proto, nft.Dport}, Map: "empty"}, mark(0x40)),
			rule(nft.Vmap{Keys: []nft.Field{nft.L4Proto, nft.Dport}, Map: "ports"}, mark(0x4)),
			rule(nft.Vmap{Keys: []nft.Field{nft.L4Proto, nft.Dport}, Map: "ports"}, mark(0x4))),
		chain("j", rule(nft.MatchMarkClear{Bits: 0x8}, mark(0x8), ret), rule(mark(0x10)))), pairs, ports, empty),
	opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x19 masq=false local=false [base j j]"},
}, {
	name: "dnat accepts and rewrites for later hooks; masquerade in postrouting",
	table: table(
		baseChain("nat-pre", "nat", "prerouting", -100, rule(dnat("10.1.0.1", 8080), mark(0x1))),
		baseChain("fwd", "filter", "forward", 0,
			rule(nft.MatchAddr{Field: nft.Daddr, Prefix: netip.MustParsePrefix("10.1.0.1/32")}, mark(0x2))),
		baseChain("nat-post", "nat", "postrouting", 100, rule(nft.Masquerade{}, mark(0x4)))),
	opts: fromNetwork,
	want: []string{"1 accept 10.1.0.1:8080 mark=0x2 masq=true local=false [nat-pre fwd nat-post]"},
}, {
	name: "dnat to a local address goes to input",
	table: table(
		baseChain("nat-pre", "nat", "prerouting", -100, rule(dnat("192.168.0.10", 8080))),
		baseChain("in", "filter", "input", 0, rule(mark(0x1)))),
	opts: fromNetwork,
	want: []string{"1 accept 192.168.0.10:8080 mark=0x1 masq=false local=true [nat-pre in]"},
}, {
	name: "dnat restates the protocol: udp does not match a tcp dnat",
	table: table(baseChain("nat-pre", "nat", "prerouting", -100,
		rule(nft.DNAT{Proto: nft.ProtoUDP, Addr: addr("10.1.0.1"), Port: 53}))),
	opts: fromNetwork,
	want: []string{"1 accept 10.0.0.2:80 mark=0x0 masq=false local=false [nat-pre]"},
}, {
	name: "only the first nat chain of a hook that nats applies",
	table: table(
		baseChain("nat-a", "nat", "prerouting", -100, rule(dnat("10.1.0.1", 1))),
		baseChain("nat-b", "nat", "prerouting", -90, rule(dnat("10.1.0.2", 2))),
		baseChain("filter", "filter", "prerouting", -80, rule(mark(0x1)))),
	opts: fromNetwork,
	want: []string{"1 accept 10.1.0.1:1 mark=0x1 masq=false local=false [nat-a filter]"},
}, {
	name: "nat runs once per connection: no dnat on the loopback pass",
	table: table(
		baseChain("nat-out", "nat", "output", -100, rule(mark(0x1))),
		baseChain("nat-pre", "nat", "prerouting", -100, rule(dnat("10.1.0.1", 1))),
		baseChain("filter-pre", "filter", "prerouting", 0, rule(mark(0x2)))),
	opts: hostToLocal,
	want: []string{"1 accept 10.0.0.2:80 mark=0x3 masq=false local=true [nat-out filter-pre]"},
}, {
	name: "reject",
	table: table(
		baseChain("a", "filter", "prerouting", 0, rule(nft.MatchNew{}, nft.Reject{}), rule(mark(0x1))),
		baseChain("b", "filter", "prerouting", 10, rule(mark(0x2)))),
	opts: fromNetwork,
	want: []string{"1 reject 10.0.0.2:80 mark=0x0 masq=false local=false [a]"},
}}

func TestSetsAndNAT(t *testing.T) { runTableCases(t, natCases) }

func TestErrors(t *testing.T) {
	filter := func(rules ...[]nft.Stmt) *nft.Table {
		return withSets(table(baseChain("base", "filter", "prerouting", 0, rules...), chain("loop", rule(nft.JumpTo("loop"))),
			chain("goto-loop", rule(nft.GotoChain("goto-loop")))), pairs, ports)
	}
	natTable := func(rules ...[]nft.Stmt) *nft.Table {
		return withSets(table(baseChain("base", "nat", "prerouting", -100, rules...)), pairs, ports)
	}
	v6 := pkt
	v6.Saddr, v6.Daddr = addr("fd00::1"), addr("fd00::2")
	for _, tc := range []struct {
		name  string
		table *nft.Table
		p     trace.Packet
		want  string
	}{
		{"nil table", nil, pkt, "nil table"},
		{"packet of the other family", filter(), v6, "does not belong"},
		{"jump loop", filter(rule(nft.JumpTo("loop"))), pkt, "nest deeper than 16"},
		{"goto loop", filter(rule(nft.GotoChain("goto-loop"))), pkt, "nest deeper than 16"},
		{"missing chain", filter(rule(nft.JumpTo("nope"))), pkt, "no such chain"},
		{"jump to a base chain", filter(rule(nft.GotoChain("base"))), pkt, "base chain"},
		{"missing set", filter(rule(nft.InSet{Keys: []nft.Field{nft.Daddr}, Set: "nope"})), pkt, "no such set"},
		{"vmap on a set", filter(rule(nft.Vmap{Keys: []nft.Field{nft.Saddr, nft.Daddr}, Map: "pairs"})), pkt, "not a verdict map"},
		{"key of the wrong type", filter(rule(nft.InSet{Keys: []nft.Field{nft.Saddr, nft.Dport}, Set: "pairs"})), pkt, "wants ipv4_addr"},
		{"key of the wrong length", filter(rule(nft.InSet{Keys: []nft.Field{nft.Saddr}, Set: "pairs"})), pkt, "1 key parts"},
		{"numgen part for an address", filter(rule(nft.InSet{Keys: []nft.Field{nft.Saddr}, Num: nft.Numgen{Mod: 1, Offset: 7}, Set: "pairs"})), pkt, "part 1 is a numgen integer"},
		{"dnat from a set", natTable(rule(nft.DNATMap{Keys: []nft.Field{nft.Saddr, nft.Daddr}, Map: "pairs"})), pkt, "does not map to"},
		{"dnat map in a filter chain", filter(rule(nft.DNATMap{Keys: []nft.Field{nft.Saddr, nft.Daddr}, Map: "pairs"})), pkt, "dnat in a filter prerouting chain"},
		{"update of a set that is not dynamic", filter(rule(nft.UpdateSet{Set: "pairs", Keys: []nft.Field{nft.Saddr, nft.Daddr}, Timeout: 1})), pkt, "not dynamic"},
		{"prefix of the other family", filter(rule(nft.MatchAddr{Field: nft.Daddr, Prefix: netip.MustParsePrefix("fd00::/8")})), pkt, "prefix fd00::/8"},
		{"dnat in a filter chain", filter(rule(dnat("10.1.0.1", 1))), pkt, "dnat in a filter prerouting chain"},
		{"masquerade in prerouting", filter(rule(nft.Masquerade{})), pkt, "masquerade in a filter prerouting chain"},
		{"random mod 0", filter(rule(nft.Random{})), pkt, "mod 0"},
		{"foreign expression", filter(rule(nft.Foreign{Desc: "counter"})), pkt, "cannot evaluate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trace.Trace(tc.table, tc.p, fromNetwork)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Trace error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestConveniences checks Destinations and Probability on the web Service.
func TestConveniences(t *testing.T) {
	table := compileTable(t, lbSnapshot(webEPs), options(), nft.IPv4)
	outs, err := trace.Trace(table, packet(webEPs[0], webIP, nft.ProtoTCP, 80), fromNetwork)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for dest, p := range trace.Destinations(outs) {
		got[dest.String()] = p.RatString()
	}
	want := map[string]string{"10.0.1.1:8080": "1/3", "10.0.2.1:8080": "1/3", "10.0.3.1:8080": "1/3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Destinations (-want +got)\n%s", diff)
	}
	masq := trace.Probability(outs, func(o trace.Outcome) bool { return o.Masqueraded })
	if masq.RatString() != "1/3" {
		t.Errorf("P(masqueraded) = %s, want 1/3", masq.RatString())
	}
}
