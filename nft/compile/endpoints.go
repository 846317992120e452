package compile

import (
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
