package compile

import (
	"cmp"
	"net/netip"
	"slices"

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
	n := 0
	for _, s := range c.slices[c.key] {
		n += len(s.Endpoints)
	}
	out := make([]candidate, 0, n)
	for _, s := range c.slices[c.key] {
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
			out = append(out, candidate{endpoint: endpoint{ep.Addresses[0], port}, ready: ep.Ready, serving: ep.Serving,
				terminating: ep.Terminating, local: ep.NodeName != "" && ep.NodeName == c.node.name, nodeKnown: ep.NodeName != "",
				hintZones: ep.HintZones, hintNodes: ep.HintNodes})
		}
	}
	// A stable sort keeps the slices' order among duplicates, and
	// CompactFunc keeps the first of each: no map per Service port (a
	// third of what a full compile allocated).
	slices.SortStableFunc(out, func(a, b candidate) int { return compareEndpoint(a.endpoint, b.endpoint) })
	return slices.CompactFunc(out, func(a, b candidate) bool { return a.endpoint == b.endpoint })
}

// endpointSets chooses the endpoints of ref for each traffic policy, and
// the ones that need a hairpin element: those used by either set that are
// on this node or name no node.
func (c *compiler) endpointSets(ref portRef, f nft.Family) (endpointSets, []endpoint) {
	use := usesOf(ref.svc.InternalLocal, ref.svc.ExternalLocal)
	cands := c.candidates(ref, f)
	sets := categorize(cands, use, c.node.name, c.node.zone)
	var hairpin []endpoint
	// cands, sets.cluster and sets.local are sorted alike: one pass over
	// the three finds the used candidates.
	ci, li := 0, 0
	for _, cd := range cands {
		used := false
		if ci < len(sets.cluster) && sets.cluster[ci] == cd.endpoint {
			ci, used = ci+1, true
		}
		if li < len(sets.local) && sets.local[li] == cd.endpoint {
			li, used = li+1, true
		}
		if used && (cd.local || !cd.nodeKnown) {
			hairpin = append(hairpin, cd.endpoint)
		}
	}
	return sets, hairpin
}

func compareEndpoint(a, b endpoint) int {
	if c := a.addr.Compare(b.addr); c != 0 {
		return c
	}
	return cmp.Compare(a.port, b.port)
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
