package compile

import "github.com/nftproxy/nftproxy/nft"

// policyChains names the endpoint chains of one Service port: "" when the
// chain does not exist because no traffic may use it.
type policyChains struct {
	cluster  string // every usable endpoint (externalTrafficPolicy or internalTrafficPolicy Cluster)
	local    string // the endpoints on this node (a policy is Local)
	internal string // where ClusterIP traffic goes: cluster, or local for internalTrafficPolicy Local
}

func (p portRef) localChain() string { return "local-" + p.chainSuffix() }

// policyChains adds the endpoint chains of ref's port and returns their
// names.
func (c *compiler) policyChains(b *builder, ref portRef, sets endpointSets) policyChains {
	var pc policyChains
	affinity := uint32(max(ref.svc.AffinitySeconds, 0))
	if len(sets.cluster) > 0 {
		pc.cluster = ref.serviceChain()
		b.chains = append(b.chains, endpointChains(pc.cluster, ref.proto, sets.cluster, affinity)...)
	}
	if len(sets.local) > 0 {
		pc.local = ref.localChain()
		b.chains = append(b.chains, endpointChains(pc.local, ref.proto, sets.local, affinity)...)
	}
	pc.internal = pc.cluster
	if ref.svc.InternalLocal {
		pc.internal = pc.local
	}
	return pc
}

// externalRules are the rules of the chain NodePort, externalIP and
// load-balancer traffic enters by.
//
// With externalTrafficPolicy Cluster it is masqueraded (the endpoint may be
// on another node, and its reply must come back through this one) and sent
// to any endpoint.
//
// With Local it keeps its source address and goes only to this node's
// endpoints, and is dropped when there are none. Traffic from pods (the
// cluster CIDRs) and from the node itself is not "external": it still goes
// to any endpoint, as kube-proxy's short-circuit rules do; the node's own
// traffic is masqueraded, since its source (often the load-balancer IP
// itself) would not route back from another node.
func (c *compiler) externalRules(f nft.Family, ref portRef, pc policyChains) []nft.Rule {
	if !ref.svc.ExternalLocal {
		return []nft.Rule{{Stmts: []nft.Stmt{nft.JumpTo(chainMarkMasq)}}, {Stmts: []nft.Stmt{nft.GotoChain(pc.cluster)}}}
	}
	var rules []nft.Rule
	if pc.cluster != "" {
		for _, p := range c.opts.localCIDRs(f) {
			rules = append(rules, nft.Rule{Stmts: []nft.Stmt{nft.MatchAddr{Field: nft.Saddr, Prefix: p.Masked()}, nft.GotoChain(pc.cluster)},
				Comment: "short-circuit pod traffic"})
		}
		rules = append(rules,
			nft.Rule{Stmts: []nft.Stmt{nft.MatchFibLocal{}, nft.JumpTo(chainMarkMasq)}, Comment: "masquerade local traffic"},
			nft.Rule{Stmts: []nft.Stmt{nft.MatchFibLocal{}, nft.GotoChain(pc.cluster)}, Comment: "short-circuit local traffic"})
	}
	if pc.local == "" {
		return append(rules, nft.Rule{Stmts: []nft.Stmt{nft.Verdict{Kind: nft.Drop}}, Comment: "no local endpoints"})
	}
	return append(rules, nft.Rule{Stmts: []nft.Stmt{nft.GotoChain(pc.local)}})
}
