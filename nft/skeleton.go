package nft

// Names of the fixed sets, maps and chains. Base-chain names, hooks and
// priorities are kube-proxy's, because CNIs and host firewalls integrate
// against them.
const (
	setClusterIPs          = "cluster-ips"
	setNodePortIPs         = "nodeport-ips"
	setHairpin             = "hairpin-endpoints"
	mapServiceIPs          = "service-ips"
	mapServiceNodePorts    = "service-nodeports"
	mapNoEndpointServices  = "no-endpoint-services"
	mapNoEndpointNodePorts = "no-endpoint-nodeports"
	mapFirewallIPs         = "firewall-ips"
	setFirewallAllow       = "firewall-allow"
	setAffinity            = "affinity"

	chainServices        = "services"
	chainMasquerading    = "masquerading"
	chainMarkMasq        = "mark-for-masquerade"
	chainMarkNonCluster  = "mark-non-cluster-for-masquerade"
	chainServiceEPCheck  = "service-endpoints-check"
	chainNodePortEPCheck = "nodeport-endpoints-check"
	chainClusterIPsCheck = "cluster-ips-check"
	chainFirewallCheck   = "firewall-check"
	chainReject          = "reject-chain"
	chainFirewallAllow   = "firewall-allow-check"
	priorityDstNAT       = -100
	priorityFilter       = 0
	prioritySrcNAT       = 100
	priorityPreDNAT      = priorityDstNAT - 10
	tableComment         = "rules for nftproxy, a kube-proxy replacement"
)

type setSpec struct {
	name    string
	key     func(Family) []DataType
	isMap   bool
	comment string
}

func addrKey(f Family) []DataType { return []DataType{AddrType(f)} }
func pairKey(f Family) []DataType { return []DataType{AddrType(f), AddrType(f)} }
func svcKey(f Family) []DataType  { return []DataType{AddrType(f), TypeInetProto, TypeInetService} }
func portKey(Family) []DataType   { return []DataType{TypeInetProto, TypeInetService} }

// sets are every set and map of the table: a fixed handful, whatever the
// number of Services (see docs/ruleset.md for why).
var sets = []setSpec{
	{setClusterIPs, addrKey, false, "Active ClusterIPs"},
	{setNodePortIPs, addrKey, false, "IPs that accept NodePort traffic"},
	{setHairpin, pairKey, false, "Endpoints reaching themselves through a Service: masqueraded"},
	{mapServiceIPs, svcKey, true, "ClusterIP, ExternalIP and LoadBalancer IP traffic"},
	{mapServiceNodePorts, portKey, true, "NodePort traffic"},
	{mapNoEndpointServices, svcKey, true, "Service IPs and ports with no endpoints"},
	{mapNoEndpointNodePorts, portKey, true, "NodePorts of Services with no endpoints"},
	{mapFirewallIPs, svcKey, true, "Destinations subject to loadBalancerSourceRanges"},
	{setFirewallAllow, rangeKey, false, "Load-balancer IP, port and source range allowed by loadBalancerSourceRanges"},
	{setAffinity, affinityKey, false, "ClientIP session affinity: client, Service address and port, endpoint chosen"},
}

// set returns the empty set or map spec describes in family f.
func (spec setSpec) set(f Family) *Set {
	s := &Set{Name: spec.name, Key: spec.key(f), Map: spec.isMap, Comment: spec.comment}
	switch spec.name {
	case setFirewallAllow:
		s.Interval = true
	case setAffinity:
		s.Dynamic, s.Size = true, affinitySize
	}
	return s
}

func newStmt(v Verdict) []Stmt { return []Stmt{MatchNew{}, v} }

// baseChains are the hooks we attach to, with the jumps each one makes.
var baseChains = []struct {
	name  string
	base  Base
	rules [][]Stmt
}{
	{"filter-prerouting-pre-dnat", Base{"filter", "prerouting", priorityPreDNAT},
		[][]Stmt{newStmt(JumpTo(chainFirewallCheck))}},
	{"filter-output-pre-dnat", Base{"filter", "output", priorityPreDNAT},
		[][]Stmt{newStmt(JumpTo(chainFirewallCheck))}},
	{"filter-input", Base{"filter", "input", priorityFilter},
		[][]Stmt{newStmt(JumpTo(chainNodePortEPCheck)), newStmt(JumpTo(chainServiceEPCheck))}},
	{"filter-forward", Base{"filter", "forward", priorityFilter},
		[][]Stmt{newStmt(JumpTo(chainServiceEPCheck)), newStmt(JumpTo(chainClusterIPsCheck))}},
	{"filter-output", Base{"filter", "output", priorityFilter},
		[][]Stmt{newStmt(JumpTo(chainServiceEPCheck)), newStmt(JumpTo(chainClusterIPsCheck))}},
	{"nat-prerouting", Base{"nat", "prerouting", priorityDstNAT},
		[][]Stmt{{JumpTo(chainServices)}}},
	{"nat-output", Base{"nat", "output", priorityDstNAT},
		[][]Stmt{{JumpTo(chainServices)}}},
	{"nat-postrouting", Base{"nat", "postrouting", prioritySrcNAT},
		[][]Stmt{{JumpTo(chainMasquerading)}}},
}

var (
	daddrProtoPort = []Field{Daddr, L4Proto, Dport}
	protoPort      = []Field{L4Proto, Dport}
)

// fixedChains returns the regular chains every table has. Their rules
// depend only on Options, never on Services.
func fixedChains(f Family, o Options) []*Chain {
	mark := o.masqueradeMark()
	return []*Chain{
		{Name: chainServices, Rules: servicesRules(f, o)},
		{Name: chainMasquerading, Rules: []Rule{
			{Stmts: []Stmt{InSet{[]Field{Saddr, Daddr}, setHairpin}, SetMark{MarkOr, mark}}},
			{Stmts: []Stmt{MatchMarkClear{mark}, Verdict{Kind: Return}}},
			{Stmts: []Stmt{SetMark{MarkXor, mark}}},
			{Stmts: []Stmt{Masquerade{}}},
		}},
		{Name: chainMarkMasq, Rules: []Rule{{Stmts: []Stmt{SetMark{MarkOr, mark}}}}},
		{Name: chainServiceEPCheck, Rules: []Rule{{Stmts: []Stmt{Vmap{daddrProtoPort, mapNoEndpointServices}}}}},
		{Name: chainNodePortEPCheck, Rules: []Rule{{Stmts: []Stmt{
			InSet{[]Field{Daddr}, setNodePortIPs}, Vmap{protoPort, mapNoEndpointNodePorts}}}}},
		{Name: chainClusterIPsCheck, Rules: []Rule{{
			Stmts:   []Stmt{InSet{[]Field{Daddr}, setClusterIPs}, Reject{}},
			Comment: "ClusterIP on a port the Service does not have"}}},
		{Name: chainFirewallCheck, Rules: []Rule{{Stmts: []Stmt{Vmap{daddrProtoPort, mapFirewallIPs}}}}},
		{Name: chainFirewallAllow, Rules: []Rule{
			{Stmts: []Stmt{InSet{[]Field{Daddr, L4Proto, Dport, Saddr}, setFirewallAllow}, Verdict{Kind: Return}}},
			{Stmts: []Stmt{Verdict{Kind: Drop}}, Comment: "source outside loadBalancerSourceRanges"},
		}},
		{Name: chainReject, Rules: []Rule{{Stmts: []Stmt{Reject{}}}}},
	}
}

// servicesRules is the entry point from the nat hooks: masquerade marking
// for ClusterIP traffic, then one verdict-map lookup for Service IPs and one
// for NodePorts.
func servicesRules(f Family, o Options) []Rule {
	var rules []Rule
	switch {
	case o.MasqueradeAll:
		rules = append(rules, Rule{Stmts: []Stmt{InSet{[]Field{Daddr}, setClusterIPs}, JumpTo(chainMarkMasq)}})
	case len(o.localCIDRs(f)) > 0:
		rules = append(rules, Rule{Stmts: []Stmt{InSet{[]Field{Daddr}, setClusterIPs}, JumpTo(chainMarkNonCluster)}})
	}
	return append(rules,
		Rule{Stmts: []Stmt{Vmap{daddrProtoPort, mapServiceIPs}}},
		Rule{Stmts: []Stmt{InSet{[]Field{Daddr}, setNodePortIPs}, Vmap{protoPort, mapServiceNodePorts}}},
	)
}

// nonClusterChain marks ClusterIP traffic from sources outside the cluster
// for masquerading, so that replies from the endpoint come back through this
// node. It is a chain of returns rather than a set so that any number of
// CIDRs costs no set.
func nonClusterChain(f Family, o Options) *Chain {
	c := &Chain{Name: chainMarkNonCluster}
	for _, p := range o.localCIDRs(f) {
		c.Rules = append(c.Rules, Rule{Stmts: []Stmt{MatchAddr{Field: Saddr, Prefix: p.Masked()}, Verdict{Kind: Return}}})
	}
	c.Rules = append(c.Rules, Rule{Stmts: []Stmt{JumpTo(chainMarkMasq)}})
	return c
}

func rangeKey(f Family) []DataType {
	return []DataType{AddrType(f), TypeInetProto, TypeInetService, AddrType(f)}
}

func affinityKey(f Family) []DataType {
	return []DataType{AddrType(f), AddrType(f), TypeInetProto, TypeInetService, AddrType(f)}
}

// affinitySize bounds the session-affinity memory of a family: one element
// per client, Service address and port, and endpoint. Without a size the kernel's default would
// cap it at 65,535 clients for the whole node.
const affinitySize = 1 << 20
