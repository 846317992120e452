package compile

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// endpoint is one address and port traffic can be sent to.
type endpoint struct {
	addr netip.Addr
	port uint16
}

// candidates returns every endpoint of ref in family f, from every
// EndpointSlice of the Service, sorted and without duplicates (the first
// slice listing an address and port wins). A slice port belongs to a
// Service port when name and protocol match: the endpoint controller has
// already resolved named target ports into slice ports.
func (c *compiler) candidates(ref portRef, f nft.Family) []candidate {
	seen := map[endpoint]bool{}
	var out []candidate
	for _, s := range c.slices[ref.svc.Key()] {
		if familyOfType(s.AddressType) != f {
			continue
		}
		port, ok := slicePort(s, ref.port)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) == 0 {
				continue
			}
			e := endpoint{ep.Addresses[0], port}
			if !seen[e] {
				seen[e] = true
				out = append(out, candidate{endpoint: e, ready: ep.Ready, serving: ep.Serving,
					terminating: ep.Terminating, local: ep.NodeName != "" && ep.NodeName == c.node.name, nodeKnown: ep.NodeName != "",
					hintZones: ep.HintZones, hintNodes: ep.HintNodes})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessEndpoint(out[i].endpoint, out[j].endpoint) })
	return out
}

// endpointSets chooses the endpoints of ref for each traffic policy, and
// the ones that need a hairpin element.
func (c *compiler) endpointSets(ref portRef, f nft.Family) (endpointSets, []endpoint) {
	use := usesOf(ref.svc.InternalLocal, ref.svc.ExternalLocal)
	cands := c.candidates(ref, f)
	sets := categorize(cands, use, c.node.name, c.node.zone)
	used := map[endpoint]bool{}
	for _, ep := range append(sets.cluster, sets.local...) {
		used[ep] = true
	}
	var hairpin []endpoint
	for _, cd := range cands {
		if used[cd.endpoint] && (cd.local || !cd.nodeKnown) {
			hairpin = append(hairpin, cd.endpoint)
		}
	}
	return sets, hairpin
}

func lessEndpoint(a, b endpoint) bool {
	if a.addr != b.addr {
		return a.addr.Less(b.addr)
	}
	return a.port < b.port
}

func familyOfType(t model.AddressType) nft.Family {
	if t == model.IPv6 {
		return nft.IPv6
	}
	return nft.IPv4
}

func slicePort(s *model.EndpointSlice, sp model.ServicePort) (uint16, bool) {
	for _, p := range s.Ports {
		if p.Name == sp.Name && p.Protocol == sp.Protocol {
			return p.Port, true
		}
	}
	return 0, false
}

// flatLimit is the most endpoints one chain picks from rule by rule. A
// Service with more is split into about √n bucket chains of about √n
// endpoints, so a new connection evaluates about √n rules instead of n/2.
const flatLimit = 32

// endpointChains returns the chain called name that picks one of eps
// uniformly, plus its bucket chains for a large Service. With session
// affinity (affinity > 0 seconds) the chain first sends a client back to
// the endpoint it chose before, if that is still one of eps (see
// affinity.go).
func endpointChains(name string, proto uint8, eps []endpoint, affinity uint32) []*nft.Chain {
	chains := pickChains(name, proto, eps, affinity)
	if affinity > 0 {
		chains[0].Rules = append(affinityRecall(proto, affinity, eps), chains[0].Rules...)
	}
	return chains
}

func pickChains(name string, proto uint8, eps []endpoint, affinity uint32) []*nft.Chain {
	if len(eps) <= flatLimit {
		rules := pickRules(len(eps), func(i int) []nft.Stmt { return pickStmts(proto, eps[i], affinity) })
		if affinity > 0 {
			rules = append(rules, nft.Rule{Stmts: []nft.Stmt{dnatTo(proto, eps[len(eps)-1])}, Comment: affinityFullComment})
		}
		return []*nft.Chain{{Name: name, Rules: rules}}
	}
	groups := split(eps, isqrtCeil(len(eps)))
	top := &nft.Chain{Name: name}
	chains := []*nft.Chain{top}
	for i, g := range groups {
		bucket := fmt.Sprintf("%s/b%d", name, i)
		chains = append(chains, pickChains(bucket, proto, g, affinity)[0])
	}
	remaining := len(eps)
	for i, g := range groups {
		stmts := []nft.Stmt{nft.GotoChain(fmt.Sprintf("%s/b%d", name, i))}
		if i < len(groups)-1 {
			stmts = append([]nft.Stmt{nft.Random{Mod: uint32(remaining), Below: uint32(len(g))}}, stmts...)
		}
		top.Rules = append(top.Rules, nft.Rule{Stmts: stmts})
		remaining -= len(g)
	}
	return chains
}

func dnatTo(proto uint8, ep endpoint) nft.DNAT {
	return nft.DNAT{Proto: proto, Addr: ep.addr, Port: ep.port}
}

// pickStmts sends a new connection to ep, remembering the choice for the
// client when the Service has session affinity.
func pickStmts(proto uint8, ep endpoint, affinity uint32) []nft.Stmt {
	if affinity == 0 {
		return []nft.Stmt{dnatTo(proto, ep)}
	}
	return []nft.Stmt{affinityRecord(affinity, ep), dnatTo(proto, ep)}
}

// pickRules returns n rules where rule i is taken with probability
// 1/(n-i) given that no earlier rule was: every endpoint is chosen with
// probability 1/n, using no set at all (sets are what is expensive to
// create, see docs/ruleset.md).
func pickRules(n int, action func(i int) []nft.Stmt) []nft.Rule {
	rules := make([]nft.Rule, n)
	for i := range n {
		stmts := action(i)
		if i < n-1 {
			stmts = append([]nft.Stmt{nft.Random{Mod: uint32(n - i), Below: 1}}, stmts...)
		}
		rules[i] = nft.Rule{Stmts: stmts}
	}
	return rules
}

// split cuts eps into k contiguous groups whose sizes differ by at most one.
func split(eps []endpoint, k int) [][]endpoint {
	groups := make([][]endpoint, 0, k)
	start := 0
	for i := range k {
		size := len(eps) / k
		if i < len(eps)%k {
			size++
		}
		groups = append(groups, eps[start:start+size])
		start += size
	}
	return groups
}

func isqrtCeil(n int) int {
	r := 1
	for r*r < n {
		r++
	}
	return r
}
