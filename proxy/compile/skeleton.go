package compile

import "github.com/nftproxy/nftproxy/nft"

// Base-chain priorities, as nft names them (dstnat, filter, srcnat).
const (
	priorityDstNAT  = -100
	priorityFilter  = 0
	prioritySrcNAT  = 100
	priorityPreDNAT = priorityDstNAT - 10
)

// skeleton returns family f's fixed structure: every set and map, empty,
// the base chains and the chains whose rules depend only on Options.
func skeleton(f nft.Family, o Options) *nft.Table {
	t := partialTable(f)
	t.Chains = append(t.Chains, baseChains(o)...)
	t.Chains = append(t.Chains, fixedChains(f, o)...)
	if o.DropNodePortsOnOtherAddresses {
		t.Chains = append(t.Chains, nodePortAddressChain())
	}
	if !o.MasqueradeAll && len(o.localCIDRs(f)) > 0 {
		t.Chains = append(t.Chains, nonClusterChain(f, o))
	}
	return t
}

// partialTable is a table with every set, empty, and no chains: what
// Tables.Update diffs to patch a table.
func partialTable(f nft.Family) *nft.Table {
	t := &nft.Table{Family: f, Name: nft.TableName}
	for _, name := range nft.Counters {
		t.Counters = append(t.Counters, nft.Counter{Name: name})
	}
	for _, spec := range sets {
		t.Sets = append(t.Sets, spec.set(f))
	}
	return t
}

type setSpec struct {
	name    string
	key     func(nft.Family) []nft.DataType // nil when declared by typeof
	isMap   bool
	comment string
	// typeof and dataTypeof declare a set by the expressions that build its
	// keys and values (nft.Set.Typeof): for keys with a numgen part.
	typeof, dataTypeof []nft.Field
}

// sets are the fixed sets and maps of the table: a handful, whatever the
// number of Services (see docs/ruleset.md for why). The endpoint maps, one
// for each list length in use, come with the pick chains (lists.go).
var sets = []setSpec{
	{nft.SetClusterIPs, addrKey, false, "Active ClusterIPs", nil, nil},
	{nft.SetServiceCIDRs, addrKey, false, "ServiceCIDRs: new traffic to an address in them that no Service holds is dropped", nil, nil},
	{nft.SetNodePortsInUse, portKey, false, "NodePorts of Services, dropped on addresses that take no NodePort traffic", nil, nil},
	{nft.SetNodePortIPs, addrKey, false, "IPs that accept NodePort traffic", nil, nil},
	{nft.SetHairpin, pairKey, false, "Endpoints reaching themselves through a Service: masqueraded", nil, nil},
	{nft.SetClusterIPPorts, svcKey, false, "ClusterIPs and ports: to their endpoints", nil, nil},
	{nft.SetExternalIPPorts, svcKey, false, "ExternalIPs, LoadBalancer IPs and ports: masqueraded, to their endpoints", nil, nil},
	{nft.SetExternalLocalIPPorts, svcKey, false, "ExternalIPs, LoadBalancer IPs and ports under externalTrafficPolicy Local", nil, nil},
	{nft.SetNodePorts, portKey, false, "NodePorts: masqueraded, to their endpoints", nil, nil},
	{nft.SetLocalNodePorts, portKey, false, "NodePorts under externalTrafficPolicy Local", nil, nil},
	{nft.MapServiceIPs, svcKey, true, "Service IPs and ports of Services with session affinity: to their chains", nil, nil},
	{nft.MapServiceNodePorts, portKey, true, "NodePorts of Services with session affinity: to their chains", nil, nil},
	{nft.MapNoEndpointServices, svcKey, true, "Service IPs and ports with no endpoints", nil, nil},
	{nft.MapNoEndpointNodePorts, portKey, true, "NodePorts of Services with no endpoints", nil, nil},
	{nft.MapFirewallIPs, svcKey, true, "Destinations subject to loadBalancerSourceRanges", nil, nil},
	{nft.SetFirewallAllow, rangeKey, false, "Load-balancer IP, port and source range allowed by loadBalancerSourceRanges", nil, nil},
	{nft.SetAffinity, nil, false, "ClientIP session affinity: client and the ID of a Service port's endpoint it was sent to",
		[]nft.Field{nft.Saddr, nft.Number}, nil},
}

// addrPort is what the endpoint maps map to: an endpoint's address and
// port.
var addrPort = []nft.Field{nft.Daddr, nft.Dport}

// set returns the empty set or map spec describes in family f.
func (spec setSpec) set(f nft.Family) *nft.Set {
	s := &nft.Set{Name: spec.name, Map: spec.isMap, Comment: spec.comment}
	if spec.key != nil {
		s.Key = spec.key(f)
	} else {
		s.Typeof, s.DataTypeof = spec.typeof, spec.dataTypeof
		s.Key, s.Data = typesOf(f, spec.typeof), typesOf(f, spec.dataTypeof)
	}
	switch spec.name {
	case nft.SetFirewallAllow, nft.SetServiceCIDRs:
		s.Interval = true
	case nft.SetAffinity:
		s.Dynamic, s.Size = true, affinitySize
	}
	return s
}

// The key types of the sets and maps, by family.
func addrKey(f nft.Family) []nft.DataType { return []nft.DataType{nft.AddrType(f)} }
func pairKey(f nft.Family) []nft.DataType { return []nft.DataType{nft.AddrType(f), nft.AddrType(f)} }
func portKey(nft.Family) []nft.DataType {
	return []nft.DataType{nft.TypeInetProto, nft.TypeInetService}
}

func svcKey(f nft.Family) []nft.DataType {
	return []nft.DataType{nft.AddrType(f), nft.TypeInetProto, nft.TypeInetService}
}

func rangeKey(f nft.Family) []nft.DataType {
	return []nft.DataType{nft.AddrType(f), nft.TypeInetProto, nft.TypeInetService, nft.AddrType(f)}
}

// typesOf returns the data types of the parts a typeof declaration names.
func typesOf(f nft.Family, fields []nft.Field) []nft.DataType {
	var out []nft.DataType
	for _, field := range fields {
		switch field {
		case nft.Saddr, nft.Daddr:
			out = append(out, nft.AddrType(f))
		case nft.L4Proto:
			out = append(out, nft.TypeInetProto)
		case nft.Dport:
			out = append(out, nft.TypeInetService)
		case nft.Number:
			out = append(out, nft.TypeInteger)
		}
	}
	return out
}

// affinitySize bounds the session-affinity memory of a family: one element
// per client and endpoint of a Service port. Without a size the kernel's
// default would cap it at 65,535 clients for the whole node.
const affinitySize = 1 << 20

// baseChains are the hooks we attach to, with the jumps each one makes.
func baseChains(o Options) []*nft.Chain {
	var forward, input []nft.Rule
	if o.DropInvalid {
		forward = append(forward, nft.Rule{Stmts: append([]nft.Stmt{nft.MatchInvalid{}}, dropInto(nft.CounterDropInvalidState)...),
			Comment: "conntrack state invalid"})
	}
	if o.DropNodePortsOnOtherAddresses {
		input = append(input, newRule(nft.JumpTo(nft.ChainNodePortAddress)))
	}
	return []*nft.Chain{
		baseChain("filter-prerouting-pre-dnat", "filter", "prerouting", priorityPreDNAT, newRule(nft.JumpTo(nft.ChainFirewallCheck))),
		baseChain("filter-output-pre-dnat", "filter", "output", priorityPreDNAT, newRule(nft.JumpTo(nft.ChainFirewallCheck))),
		baseChain("filter-input", "filter", "input", priorityFilter, append(input,
			newRule(nft.JumpTo(nft.ChainNodePortEPCheck)), newRule(nft.JumpTo(nft.ChainServiceEPCheck)))...),
		baseChain("filter-forward", "filter", "forward", priorityFilter, append(forward,
			newRule(nft.JumpTo(nft.ChainServiceEPCheck)), newRule(nft.JumpTo(nft.ChainClusterIPsCheck)))...),
		baseChain("filter-output", "filter", "output", priorityFilter,
			newRule(nft.JumpTo(nft.ChainServiceEPCheck)), newRule(nft.JumpTo(nft.ChainClusterIPsCheck))),
		baseChain("nat-prerouting", "nat", "prerouting", priorityDstNAT, rule(nft.JumpTo(nft.ChainServices))),
		baseChain("nat-output", "nat", "output", priorityDstNAT, rule(nft.JumpTo(nft.ChainServices))),
		baseChain("nat-postrouting", "nat", "postrouting", prioritySrcNAT, rule(nft.JumpTo(nft.ChainMasquerading))),
	}
}

func baseChain(name, typ, hook string, priority int, rules ...nft.Rule) *nft.Chain {
	return &nft.Chain{Name: name, Base: &nft.Base{Type: typ, Hook: hook, Priority: priority}, Rules: rules}
}

// newRule is a rule that applies v to packets starting a connection.
func newRule(v nft.Verdict) nft.Rule { return rule(nft.MatchNew{}, v) }

// nodePortAddressChain drops new connections to a NodePort in use that
// arrive on an address outside nodeport-ips. It runs in the input hook,
// after DNAT: NodePort traffic that was served has an endpoint as its
// destination by then.
func nodePortAddressChain() *nft.Chain {
	return &nft.Chain{Name: nft.ChainNodePortAddress, Rules: []nft.Rule{
		rule(nft.InSet{Keys: daddr, Set: nft.SetNodePortIPs}, nft.Verdict{Kind: nft.Return}),
		{Stmts: append([]nft.Stmt{nft.InSet{Keys: protoPort, Set: nft.SetNodePortsInUse}}, dropInto(nft.CounterDropNodePortAddress)...),
			Comment: "NodePort on an address that takes none"},
	}}
}

var (
	daddrProtoPort = []nft.Field{nft.Daddr, nft.L4Proto, nft.Dport}
	protoPort      = []nft.Field{nft.L4Proto, nft.Dport}
	daddr          = []nft.Field{nft.Daddr}
)

// rule is a rule of stmts, without a comment.
func rule(stmts ...nft.Stmt) nft.Rule { return nft.Rule{Stmts: stmts} }

// fixedChains returns the regular chains every table has. Their rules
// depend only on Options, never on Services.
func fixedChains(f nft.Family, o Options) []*nft.Chain {
	mark := o.masqueradeMark()
	markMasq := nft.SetMark{Op: nft.MarkOr, Bits: mark}
	ret := nft.Verdict{Kind: nft.Return}
	return []*nft.Chain{
		{Name: nft.ChainServices, Rules: servicesRules(f, o)},
		{Name: nft.ChainMasquerading, Rules: []nft.Rule{
			rule(nft.InSet{Keys: []nft.Field{nft.Saddr, nft.Daddr}, Set: nft.SetHairpin}, markMasq),
			rule(nft.MatchMarkClear{Bits: mark}, ret),
			rule(nft.SetMark{Op: nft.MarkXor, Bits: mark}),
			rule(nft.Masquerade{}),
		}},
		{Name: nft.ChainMarkMasq, Rules: []nft.Rule{rule(markMasq)}},
		{Name: nft.ChainServiceEPCheck, Rules: []nft.Rule{rule(nft.Vmap{Keys: daddrProtoPort, Map: nft.MapNoEndpointServices})}},
		{Name: nft.ChainNodePortEPCheck, Rules: []nft.Rule{rule(
			nft.InSet{Keys: daddr, Set: nft.SetNodePortIPs}, nft.Vmap{Keys: protoPort, Map: nft.MapNoEndpointNodePorts})}},
		{Name: nft.ChainClusterIPsCheck, Rules: clusterIPsCheckRules()},
		{Name: nft.ChainFirewallCheck, Rules: []nft.Rule{rule(nft.Vmap{Keys: daddrProtoPort, Map: nft.MapFirewallIPs})}},
		{Name: nft.ChainFirewallAllow, Rules: []nft.Rule{
			rule(nft.InSet{Keys: []nft.Field{nft.Daddr, nft.L4Proto, nft.Dport, nft.Saddr}, Set: nft.SetFirewallAllow}, ret),
			{Stmts: dropInto(nft.CounterDropSourceRange), Comment: "source outside loadBalancerSourceRanges"},
		}},
		{Name: nft.ChainReject, Rules: []nft.Rule{rule(rejectInto(nft.CounterRejectNoEndpoints)...)}},
		{Name: nft.ChainNoLocal, Rules: []nft.Rule{rule(dropInto(nft.CounterDropNoLocalEndpoints)...)}},
		{Name: nft.ChainExternal, Rules: entryRules(f, o, false, nft.ChainPickEndpoint, "")},
		{Name: nft.ChainExternalLocal, Rules: entryRules(f, o, true, nft.ChainPickEndpoint, nft.ChainPickLocalEndpoint)},
		{Name: nft.ChainNodePort, Rules: entryRules(f, o, false, nft.ChainPickNodePortEndpoint, "")},
		{Name: nft.ChainNodePortLocal, Rules: entryRules(f, o, true, nft.ChainPickNodePortEndpoint, nft.ChainPickNodePortLocalEndpoint)},
	}
}

// clusterIPsCheckRules run for new connections that no Service port took
// (forward and output hooks, after DNAT): a ClusterIP on a port its Service
// lacks is rejected; any other address inside a ServiceCIDR is held by no
// Service and is dropped, as kube-proxy does, rather than sent on by the
// node's routes (a default route would take it out of the cluster).
func clusterIPsCheckRules() []nft.Rule {
	return []nft.Rule{
		{Stmts: append([]nft.Stmt{nft.InSet{Keys: daddr, Set: nft.SetClusterIPs}}, rejectInto(nft.CounterRejectUnknownPort)...),
			Comment: "ClusterIP on a port the Service does not have"},
		{Stmts: append([]nft.Stmt{nft.InSet{Keys: daddr, Set: nft.SetServiceCIDRs}}, dropInto(nft.CounterDropUnallocated)...),
			Comment: "Address in a ServiceCIDR that no Service holds"},
	}
}

// entryRules are the rules of a chain that NodePort, externalIP and
// load-balancer traffic enters by: cluster picks from every endpoint of
// the Service, local from this node's ("" when it has none).
//
// With externalTrafficPolicy Cluster the traffic is masqueraded (the
// endpoint may be on another node, and its reply must come back through
// this one) and sent to any endpoint.
//
// With Local it keeps its source address and goes only to this node's
// endpoints, and is dropped when there are none. Traffic from pods (the
// cluster CIDRs) and from the node itself is not "external": it still goes
// to any endpoint, as kube-proxy's short-circuit rules do; the node's own
// traffic is masqueraded, since its source (often the load-balancer IP
// itself) would not route back from another node.
func entryRules(f nft.Family, o Options, local bool, cluster, localChain string) []nft.Rule {
	if !local {
		return []nft.Rule{rule(nft.JumpTo(nft.ChainMarkMasq)), rule(nft.GotoChain(cluster))}
	}
	var rules []nft.Rule
	for _, p := range o.localCIDRs(f) {
		rules = append(rules, nft.Rule{Stmts: []nft.Stmt{nft.MatchAddr{Field: nft.Saddr, Prefix: p.Masked()}, nft.GotoChain(cluster)},
			Comment: "short-circuit pod traffic"})
	}
	rules = append(rules,
		nft.Rule{Stmts: []nft.Stmt{nft.MatchFibLocal{}, nft.JumpTo(nft.ChainMarkMasq)}, Comment: "masquerade local traffic"},
		nft.Rule{Stmts: []nft.Stmt{nft.MatchFibLocal{}, nft.GotoChain(cluster)}, Comment: "short-circuit local traffic"})
	if localChain != "" {
		rules = append(rules, rule(nft.JumpTo(localChain)))
	}
	return append(rules, nft.Rule{Stmts: dropInto(nft.CounterDropNoLocalEndpoints), Comment: "no local endpoints"})
}

// dropInto and rejectInto end a rule, counting the packet into the named
// counter first: every drop and reject of the table says why in a counter.
func dropInto(counter string) []nft.Stmt {
	return []nft.Stmt{nft.CountInto{Counter: counter}, nft.Verdict{Kind: nft.Drop}}
}

func rejectInto(counter string) []nft.Stmt {
	return []nft.Stmt{nft.CountInto{Counter: counter}, nft.Reject{}}
}

// servicesRules is the entry point from the nat hooks: masquerade marking
// for ClusterIP traffic, then the lookups that send each entry (a Service
// IP and port, or a NodePort) to its chain, one lookup per kind of entry.
//
// Entries of Services without session affinity are elements of plain sets
// that say where their traffic goes, not of a verdict map: the kernel
// re-validates the table for a new rule (a rung, lists.go) or a goto
// element by walking every element of every verdict map on the way, once
// per hook, so a verdict map of every Service IP would make that walk
// grow with the cluster. Only Services with session affinity, which have
// chains of their own, are in the verdict maps.
func servicesRules(f nft.Family, o Options) []nft.Rule {
	var rules []nft.Rule
	clusterIP := nft.InSet{Keys: daddr, Set: nft.SetClusterIPs}
	switch {
	case o.MasqueradeAll:
		rules = append(rules, rule(clusterIP, nft.JumpTo(nft.ChainMarkMasq)))
	case len(o.localCIDRs(f)) > 0:
		rules = append(rules, rule(clusterIP, nft.JumpTo(nft.ChainMarkNonCluster)))
	}
	nodePort := nft.InSet{Keys: daddr, Set: nft.SetNodePortIPs}
	return append(rules,
		rule(nft.InSet{Keys: daddrProtoPort, Set: nft.SetClusterIPPorts}, nft.GotoChain(nft.ChainPickEndpoint)),
		rule(nft.InSet{Keys: daddrProtoPort, Set: nft.SetExternalIPPorts}, nft.GotoChain(nft.ChainExternal)),
		rule(nft.InSet{Keys: daddrProtoPort, Set: nft.SetExternalLocalIPPorts}, nft.GotoChain(nft.ChainExternalLocal)),
		rule(nft.Vmap{Keys: daddrProtoPort, Map: nft.MapServiceIPs}),
		rule(nodePort, nft.InSet{Keys: protoPort, Set: nft.SetNodePorts}, nft.GotoChain(nft.ChainNodePort)),
		rule(nodePort, nft.InSet{Keys: protoPort, Set: nft.SetLocalNodePorts}, nft.GotoChain(nft.ChainNodePortLocal)),
		rule(nodePort, nft.Vmap{Keys: protoPort, Map: nft.MapServiceNodePorts}),
	)
}

// nonClusterChain marks ClusterIP traffic from sources outside the cluster
// for masquerading, so that replies from the endpoint come back through this
// node. It is a chain of returns rather than a set so that any number of
// CIDRs costs no set.
func nonClusterChain(f nft.Family, o Options) *nft.Chain {
	c := &nft.Chain{Name: nft.ChainMarkNonCluster}
	for _, p := range o.localCIDRs(f) {
		c.Rules = append(c.Rules, rule(nft.MatchAddr{Field: nft.Saddr, Prefix: p.Masked()}, nft.Verdict{Kind: nft.Return}))
	}
	c.Rules = append(c.Rules, rule(nft.JumpTo(nft.ChainMarkMasq)))
	return c
}
