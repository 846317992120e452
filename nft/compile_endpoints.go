package nft

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// endpoint is one address and port traffic can be sent to.
type endpoint struct {
	addr netip.Addr
	port uint16
}

// endpoints returns the ready endpoints of ref in family f, from every
// EndpointSlice of the Service, sorted and without duplicates. A slice port
// belongs to a Service port when name and protocol match: the endpoint
// controller has already resolved named target ports into slice ports.
func (c *compiler) endpoints(ref portRef, f Family) []endpoint {
	seen := map[endpoint]bool{}
	var out []endpoint
	for _, s := range c.slices[ref.svc.Key()] {
		if familyOfType(s.AddressType) != f {
			continue
		}
		port, ok := slicePort(s, ref.port)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			if !ep.Ready || len(ep.Addresses) == 0 {
				continue
			}
			e := endpoint{ep.Addresses[0], port}
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessEndpoint(out[i], out[j]) })
	return out
}

func lessEndpoint(a, b endpoint) bool {
	if a.addr != b.addr {
		return a.addr.Less(b.addr)
	}
	return a.port < b.port
}

func familyOfType(t model.AddressType) Family {
	if t == model.IPv6 {
		return IPv6
	}
	return IPv4
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
// uniformly, plus its bucket chains for a large Service.
func endpointChains(name string, proto uint8, eps []endpoint) []*Chain {
	if len(eps) <= flatLimit {
		return []*Chain{{Name: name, Rules: pickRules(len(eps), func(i int) []Stmt {
			return []Stmt{DNAT{Proto: proto, Addr: eps[i].addr, Port: eps[i].port}}
		})}}
	}
	groups := split(eps, isqrtCeil(len(eps)))
	top := &Chain{Name: name}
	chains := []*Chain{top}
	for i, g := range groups {
		bucket := fmt.Sprintf("%s/b%d", name, i)
		chains = append(chains, endpointChains(bucket, proto, g)[0])
	}
	remaining := len(eps)
	for i, g := range groups {
		stmts := []Stmt{GotoChain(fmt.Sprintf("%s/b%d", name, i))}
		if i < len(groups)-1 {
			stmts = append([]Stmt{Random{Mod: uint32(remaining), Below: uint32(len(g))}}, stmts...)
		}
		top.Rules = append(top.Rules, Rule{Stmts: stmts})
		remaining -= len(g)
	}
	return chains
}

// pickRules returns n rules where rule i is taken with probability
// 1/(n-i) given that no earlier rule was: every endpoint is chosen with
// probability 1/n, using no set at all (sets are what is expensive to
// create, see docs/ruleset.md).
func pickRules(n int, action func(i int) []Stmt) []Rule {
	rules := make([]Rule, n)
	for i := range n {
		stmts := action(i)
		if i < n-1 {
			stmts = append([]Stmt{Random{Mod: uint32(n - i), Below: 1}}, stmts...)
		}
		rules[i] = Rule{Stmts: stmts}
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
