package dataplane

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestDriftPlan: what each announced change leads to, planned against
// the mirror of a small cluster: the objects changed and nothing else, or
// the whole table when a patch cannot tell (the table, a set or a base
// chain changed, or an element of ours could not be read).
func TestDriftPlan(t *testing.T) {
	snap := synth.Plain(3, 2)
	// Service 0 has affinity: its entry is a verdict-map element (goto its
	// chain), which a change of verdict can replace.
	snap.Services[0].AffinitySeconds = 10800
	snap.ServiceCIDRs = []model.ServiceCIDR{{Name: "kubernetes", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")}}}
	mirror := compile.New(snap, testNode, compile.DefaultOptions())
	whole := mirror.Table(nft.IPv4)
	svcIP := whole.Set("service-ips").Elements[0]
	uncommented := svcIP
	uncommented.Comment = ""
	if svcIP.Comment == "" {
		t.Fatalf("service-ips element %v has no comment", svcIP)
	}
	cidr := whole.Set("service-cidrs").Elements[0]
	ep := whole.Set("endpoints-2").Elements[0]
	other := nft.Element{Key: []nft.Value{{Addr: netip.MustParseAddr("10.99.0.1")}, {Num: 6}, {Num: 80}}, Verdict: svcIP.Verdict}
	moved := svcIP
	moved.Verdict = nft.Verdict{Kind: nft.Drop}
	ch := func(k nft.ChangeKind, name string) nft.Change {
		return nft.Change{Kind: k, Family: nft.IPv4, Name: name}
	}
	elem := func(k nft.ChangeKind, set string, e nft.Element) nft.Change {
		c := ch(k, set)
		c.Element = &e
		return c
	}
	tests := []struct {
		name    string
		changes []nft.Change
		want    []string // the plan's lines; "full" for a table rebuilt whole
	}{
		{"element deleted", []nft.Change{elem(nft.ElementDeleted, "service-ips", svcIP)},
			[]string{"add element ip kube-proxy service-ips { 1 elements }"}},
		{"endpoint element deleted", []nft.Change{elem(nft.ElementDeleted, "endpoints-2", ep)},
			[]string{"add element ip kube-proxy endpoints-2 { 1 elements }"}},
		{"element deleted and added back", []nft.Change{elem(nft.ElementDeleted, "service-ips", svcIP), elem(nft.ElementAdded, "service-ips", svcIP)}, nil},
		{"element of somebody else's", []nft.Change{elem(nft.ElementAdded, "service-ips", other)},
			[]string{"delete element ip kube-proxy service-ips { 1 elements }"}},
		{"element replaced by another verdict", []nft.Change{elem(nft.ElementDeleted, "service-ips", svcIP), elem(nft.ElementAdded, "service-ips", moved)},
			[]string{"delete element ip kube-proxy service-ips { 1 elements }", "add element ip kube-proxy service-ips { 1 elements }"}},
		{"element added back without its comment", []nft.Change{elem(nft.ElementDeleted, "service-ips", svcIP), elem(nft.ElementAdded, "service-ips", uncommented)},
			[]string{"delete element ip kube-proxy service-ips { 1 elements }", "add element ip kube-proxy service-ips { 1 elements }"}},
		{"ServiceCIDR range deleted", []nft.Change{elem(nft.ElementDeleted, "service-cidrs", cidr)},
			[]string{"add element ip kube-proxy service-cidrs { 1 elements }"}},
		{"ServiceCIDR range bound deleted, as the kernel announces it", []nft.Change{ch(nft.ElementDeleted, "service-cidrs")}, []string{"full"}},
		{"affinity memory flushed", []nft.Change{elem(nft.ElementDeleted, "affinity", nft.Element{Key: []nft.Value{{Addr: netip.MustParseAddr("10.0.0.1")}, {Num: 7}}})}, nil},
		{"chain flushed", []nft.Change{ch(nft.RuleDeleted, "pick-endpoint")},
			append([]string{"flush chain ip kube-proxy pick-endpoint"}, ruleLines(whole, "pick-endpoint")...)},
		{"rule with an anonymous set added", []nft.Change{
			{Kind: nft.SetAdded, Family: nft.IPv4, Name: "__set0", Anonymous: true},
			elem(nft.ElementAdded, "__set0", other), ch(nft.RuleAdded, "services")},
			append([]string{"flush chain ip kube-proxy services"}, ruleLines(whole, "services")...)},
		{"chain of somebody else's", []nft.Change{ch(nft.ChainAdded, "stray"), ch(nft.RuleAdded, "stray")},
			[]string{"flush chain ip kube-proxy stray", "delete chain ip kube-proxy stray"}},
		{"chain deleted", []nft.Change{ch(nft.RuleDeleted, "nodeport"), ch(nft.RuleDeleted, "nodeport"), ch(nft.ChainDeleted, "nodeport")},
			append([]string{"add chain ip kube-proxy nodeport"}, ruleLines(whole, "nodeport")...)},
		{"table deleted", []nft.Change{ch(nft.SetDeleted, "endpoints-2"), ch(nft.TableDeleted, "")}, []string{"full"}},
		{"set deleted", []nft.Change{ch(nft.SetDeleted, "firewall-ips")}, []string{"full"}},
		{"set added", []nft.Change{ch(nft.SetAdded, "mine")}, []string{"full"}},
		{"a rule's set deleted with it", []nft.Change{ch(nft.RuleDeleted, "services"), ch(nft.SetDeleted, "__set0")},
			append([]string{"flush chain ip kube-proxy services"}, ruleLines(whole, "services")...)},
		{"base chain deleted", []nft.Change{ch(nft.ChainDeleted, "nat-prerouting")}, []string{"full"}},
		{"base chain made anew without its hook", []nft.Change{ch(nft.ChainDeleted, "nat-prerouting"), ch(nft.ChainAdded, "nat-prerouting")}, []string{"full"}},
		{"base chain flushed", []nft.Change{ch(nft.RuleDeleted, "nat-prerouting")},
			append([]string{"flush chain ip kube-proxy nat-prerouting"}, ruleLines(whole, "nat-prerouting")...)},
		{"chain renamed", []nft.Change{ch(nft.ChainChanged, "services2")}, []string{"full"}},
		{"counter of someone else's added", []nft.Change{ch(nft.CounterAdded, "theirs")}, []string{"full"}},
		{"a counter of ours deleted with its rules", []nft.Change{ch(nft.RuleDeleted, "reject-chain"), ch(nft.CounterDeleted, nft.CounterRejectNoEndpoints)},
			[]string{"full"}},
		{"element of ours unreadable", []nft.Change{ch(nft.ElementDeleted, "endpoints-2")}, []string{"full"}},
		{"element of a rule's set unreadable", []nft.Change{ch(nft.ElementAdded, "__set0")}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := drift{}
			d.add(tc.changes)
			p := d.plan(mirror)
			got := strings.Split(strings.TrimSpace(p.Text()), "\n")
			switch {
			case p.Full:
				got = []string{"full"}
			case p.Empty():
				got = nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if p.Full && p.Stats().ElementsAdded == 0 {
				t.Errorf("a table rebuilt without its elements:\n%s", p.Text())
			}
		})
	}
}

func ruleLines(t *nft.Table, chain string) []string {
	var out []string
	for _, r := range t.Chain(chain).Rules {
		out = append(out, "add rule ip kube-proxy "+chain+" "+r.Text(nft.IPv4))
	}
	return out
}

// TestDriftPlanApplies: the plans of announced changes are valid for the
// kernel (the atomic fake, which checks references) and bring it back to
// exactly the mirror.
func TestDriftPlanApplies(t *testing.T) {
	for _, tc := range foreignPlans {
		t.Run(tc.name, func(t *testing.T) {
			f := nft.NewFake()
			mirror := compile.New(synth.Plain(5, 3), testNode, compile.DefaultOptions())
			want := mirror.Ruleset()
			if err := f.Apply(nft.Diff(nil, want)); err != nil {
				t.Fatal(err)
			}
			ch, cancel := subscribe(t, f)
			defer cancel()
			if err := f.Foreign(tc.plan(f.Ruleset)); err != nil {
				t.Fatalf("tampering: %v", err)
			}
			d := drift{}
			d.add((<-ch).Changes)
			if err := f.Apply(d.plan(mirror)); err != nil {
				t.Fatalf("repair: %v", err)
			}
			if diff := cmp.Diff(want.CanonicalText(), f.Ruleset.CanonicalText()); diff != "" {
				t.Fatalf("after the repair (-mirror +kernel):\n%s", diff)
			}
		})
	}
}

// foreignPlans are transactions somebody else commits; each one changes
// our table.
var foreignPlans = []struct {
	name string
	plan func(rs nft.Ruleset) *nft.Plan
	ops  int // the repair's operations, when it is a patch; 0: the table rebuilt
}{
	{"delete a cluster-ip-ports element", func(rs nft.Ruleset) *nft.Plan {
		return deleteFirst(rs, "cluster-ip-ports", 1)
	}, 1},
	{"delete an endpoint element", func(rs nft.Ruleset) *nft.Plan {
		return deleteFirst(rs, "endpoints-3", 1)
	}, 1},
	{"delete every endpoint element", func(rs nft.Ruleset) *nft.Plan {
		return deleteFirst(rs, "endpoints-3", len(rs[nft.IPv4].Set("endpoints-3").Elements))
	}, 1},
	{"flush the pick chain", func(nft.Ruleset) *nft.Plan {
		return &nft.Plan{Ops: []nft.Op{{Kind: nft.FlushChain, Family: nft.IPv4, Name: "pick-endpoint"}}}
	}, 2},
	{"add a rule", func(nft.Ruleset) *nft.Plan {
		return &nft.Plan{Ops: []nft.Op{{Kind: nft.AddRule, Family: nft.IPv4, Name: "services",
			Rule: &nft.Rule{Stmts: []nft.Stmt{nft.Foreign{Desc: "counter"}}}}}}
	}, 8}, // services flushed and its 7 rules added
	{"add a chain, and a jump to it", func(nft.Ruleset) *nft.Plan {
		return &nft.Plan{Ops: []nft.Op{{Kind: nft.AddChain, Family: nft.IPv4, Chain: &nft.Chain{Name: "stray"}},
			{Kind: nft.AddRule, Family: nft.IPv4, Name: "services", Rule: &nft.Rule{Stmts: []nft.Stmt{nft.JumpTo("stray")}}}}}
	}, 10}, // the same, and stray flushed and deleted
	{"delete the table", func(nft.Ruleset) *nft.Plan {
		return &nft.Plan{Ops: []nft.Op{{Kind: nft.DeleteTable, Family: nft.IPv4, Name: nft.TableName}}}
	}, 0},
}

func deleteFirst(rs nft.Ruleset, set string, n int) *nft.Plan {
	s := rs[nft.IPv4].Set(set)
	return &nft.Plan{Ops: []nft.Op{{Kind: nft.DeleteElements, Family: nft.IPv4, Name: set, Set: s,
		Elements: slices.Clone(s.Elements[:n])}}}
}

// TestDriftPlanIntervalSet: the kernel hands the addresses of an interval
// element back as prefixes (a load-balancer IP as a /32), where the mirror
// has an address; the element is still recognized as the mirror's.
func TestDriftPlanIntervalSet(t *testing.T) {
	snap := synth.Plain(1, 1)
	svc := &snap.Services[0]
	svc.Type, svc.LoadBalancerIPs = model.LoadBalancer, []netip.Addr{netip.MustParseAddr("203.0.113.1")}
	svc.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.7/32")}
	mirror := compile.New(snap, testNode, compile.DefaultOptions())
	allow := mirror.Table(nft.IPv4).Set("firewall-allow")
	if len(allow.Elements) != 2 {
		t.Fatalf("firewall-allow has %d elements, want 2", len(allow.Elements))
	}
	for _, e := range allow.Elements {
		kernel := nft.Element{Key: slices.Clone(e.Key)}
		for i, v := range kernel.Key {
			if v.Addr.IsValid() {
				kernel.Key[i] = nft.Value{Prefix: netip.PrefixFrom(v.Addr, 32)}
			}
		}
		for _, tc := range []struct {
			changes []nft.ChangeKind
			ops     int
		}{{[]nft.ChangeKind{nft.ElementDeleted}, 1}, {[]nft.ChangeKind{nft.ElementDeleted, nft.ElementAdded}, 0}} {
			d := drift{}
			for _, k := range tc.changes {
				d.add([]nft.Change{{Kind: k, Family: nft.IPv4, Name: "firewall-allow", Element: &kernel}})
			}
			if p := d.plan(mirror); len(p.Ops) != tc.ops || p.Stats().ElementsRemoved != 0 {
				t.Errorf("%s %v: plan\n%s\nwant %d ops adding it back", allow.ElementText(e), tc.changes, p.Text(), tc.ops)
			}
		}
	}
}
