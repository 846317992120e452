package compile

import "slices"

// candidate is one endpoint of a Service port with what the traffic
// policies and topology need to know about it.
type candidate struct {
	endpoint
	ready, serving, terminating bool
	local                       bool // on this node
	nodeKnown                   bool // the endpoint names its node
	hintZones, hintNodes        []string
}

// servingTerminating reports whether c may take traffic although it is not
// ready: a serving endpoint that is terminating still takes traffic, as a last resort,
// so that a rolling update does not drop connections.
func (c candidate) servingTerminating() bool { return c.serving && c.terminating }

// policyUse says which endpoint sets a Service port's traffic uses: the
// cluster-wide set (some traffic has policy Cluster) and the node-local set
// (some traffic has policy Local).
type policyUse struct{ cluster, local bool }

func usesOf(internalLocal, externalLocal bool) policyUse {
	return policyUse{cluster: !internalLocal || !externalLocal, local: internalLocal || externalLocal}
}

// endpointSets are the endpoints of one Service port as the traffic
// policies see them.
type endpointSets struct {
	// cluster is for traffic with policy Cluster, after topology; nil when no
	// traffic uses it.
	cluster []endpoint
	// local is for traffic with policy Local: the endpoints on this node.
	local []endpoint
	// any is true when some endpoint is usable somewhere in the cluster,
	// even if none is usable from this node: traffic is then dropped rather
	// than rejected.
	any bool
}

// topology modes, from the EndpointSlice hints.
const (
	topologyNone     = ""
	topologySameZone = "PreferSameZone"
	topologySameNode = "PreferSameNode"
)

// categorize chooses the endpoints each traffic policy uses, as kube-proxy's
// CategorizeEndpoints does: ready endpoints, narrowed by topology hints when
// every ready endpoint carries one and one matches this node (or its zone);
// serving-and-terminating endpoints when no ready one is left, decided
// separately for the cluster-wide and the local set. eps must be sorted;
// the result keeps their order.
func categorize(eps []candidate, use policyUse, node, zone string) endpointSets {
	var out endpointSets
	if use.cluster {
		mode := topologyMode(eps, node, zone)
		out.cluster = filter(eps, func(c candidate) bool { return c.ready && availableFor(c, mode, node, zone) })
		if len(out.cluster) == 0 {
			out.cluster = filter(eps, candidate.servingTerminating)
		}
		out.any = len(out.cluster) > 0
	}
	if !use.local {
		return out
	}
	for _, c := range eps {
		out.any = out.any || c.ready || c.servingTerminating()
	}
	out.local = filter(eps, func(c candidate) bool { return c.local && c.ready })
	if len(out.local) == 0 {
		out.local = filter(eps, func(c candidate) bool { return c.local && c.servingTerminating() })
	}
	return out
}

// topologyMode returns PreferSameNode when every ready endpoint has a node
// hint and one names this node, else PreferSameZone when every ready
// endpoint has a zone hint and one names this node's zone, else none: hints
// that do not cover this node are ignored rather than leaving it with no
// endpoint.
func topologyMode(eps []candidate, node, zone string) string {
	ready, allNodes, forNode, allZones, forZone := false, true, false, true, false
	for _, c := range eps {
		if !c.ready {
			continue
		}
		ready = true
		allNodes = allNodes && len(c.hintNodes) > 0
		forNode = forNode || slices.Contains(c.hintNodes, node)
		allZones = allZones && len(c.hintZones) > 0
		forZone = forZone || (zone != "" && slices.Contains(c.hintZones, zone))
	}
	switch {
	case !ready:
		return topologyNone
	case allNodes && forNode:
		return topologySameNode
	case allZones && forZone:
		return topologySameZone
	}
	return topologyNone
}

func availableFor(c candidate, mode, node, zone string) bool {
	switch mode {
	case topologySameNode:
		return slices.Contains(c.hintNodes, node)
	case topologySameZone:
		return slices.Contains(c.hintZones, zone)
	}
	return true
}

func filter(eps []candidate, keep func(candidate) bool) []endpoint {
	n := 0
	for _, c := range eps {
		if keep(c) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]endpoint, 0, n)
	for _, c := range eps {
		if keep(c) {
			out = append(out, c.endpoint)
		}
	}
	return out
}

// zoneLabel is the Node label topology hints are matched against.
const zoneLabel = "topology.kubernetes.io/zone"
