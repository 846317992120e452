package nft

import "strings"

// Names of the fixed sets, maps and chains of our tables: proxy/compile
// writes them, proxy/explain reads them back from the kernel. Base-chain
// names, hooks and priorities are kube-proxy's, because CNIs and host
// firewalls integrate against them.
const (
	SetClusterIPs       = "cluster-ips"
	SetNodePortIPs      = "nodeport-ips"
	SetHairpin          = "hairpin-endpoints"
	MapServiceIPs       = "service-ips"
	MapServiceNodePorts = "service-nodeports"

	// Where the entries of Services without session affinity go: an entry
	// is an element of the set that names its chain (proxy/compile's
	// servicesRules).
	SetClusterIPPorts       = "cluster-ip-ports"
	SetExternalIPPorts      = "external-ip-ports"
	SetExternalLocalIPPorts = "external-local-ip-ports"
	SetNodePorts            = "node-ports"
	SetLocalNodePorts       = "local-node-ports"
	MapNoEndpointServices   = "no-endpoint-services"
	MapNoEndpointNodePorts  = "no-endpoint-nodeports"
	MapFirewallIPs          = "firewall-ips"
	SetFirewallAllow        = "firewall-allow"
	SetAffinity             = "affinity"
	SetServiceCIDRs         = "service-cidrs"
	SetNodePortsInUse       = "nodeports-in-use"

	MapEndpoints              = "endpoints"
	MapLocalEndpoints         = "local-endpoints"
	MapNodePortEndpoints      = "nodeport-endpoints"
	MapNodePortLocalEndpoints = "nodeport-local-endpoints"

	ChainServices        = "services"
	ChainMasquerading    = "masquerading"
	ChainMarkMasq        = "mark-for-masquerade"
	ChainMarkNonCluster  = "mark-non-cluster-for-masquerade"
	ChainServiceEPCheck  = "service-endpoints-check"
	ChainNodePortEPCheck = "nodeport-endpoints-check"
	ChainClusterIPsCheck = "cluster-ips-check"
	ChainFirewallCheck   = "firewall-check"
	ChainReject          = "reject-chain"
	ChainNoLocal         = "no-local-endpoints"
	ChainFirewallAllow   = "firewall-allow-check"
	ChainNodePortAddress = "nodeport-address-check"

	ChainExternal                  = "external"
	ChainExternalLocal             = "external-local"
	ChainNodePort                  = "nodeport"
	ChainNodePortLocal             = "nodeport-local"
	ChainPickEndpoint              = "pick-endpoint"
	ChainPickLocalEndpoint         = "pick-local-endpoint"
	ChainPickNodePortEndpoint      = "pick-nodeport-endpoint"
	ChainPickNodePortLocalEndpoint = "pick-nodeport-local-endpoint"
)

// The sets and maps whose elements are the entries of Services, by their
// key: a Service address . protocol . port, or protocol . NodePort. Entries
// of Services without session affinity are in the plain sets, those with
// affinity in the verdict maps, those without endpoints in the no-endpoint
// maps. A key is in at most one set of a group: proxy/compile claims it in
// the group, and proxy/explain looks an entry up in all of them.
var (
	ServiceIPEntrySets = []string{SetClusterIPPorts, SetExternalIPPorts, SetExternalLocalIPPorts, MapServiceIPs, MapNoEndpointServices}
	NodePortEntrySets  = []string{SetNodePorts, SetLocalNodePorts, MapServiceNodePorts, MapNoEndpointNodePorts}
)

// The counter objects of the table: every rule that drops or rejects counts
// into the one of its reason. The name is the verdict, then the reason
// that /metrics labels it with (CounterReason).
const (
	CounterRejectNoEndpoints    = "reject-no-endpoints"
	CounterRejectUnknownPort    = "reject-unknown-port"
	CounterDropNoLocalEndpoints = "drop-no-local-endpoints"
	CounterDropUnallocated      = "drop-unallocated-address"
	CounterDropSourceRange      = "drop-source-range"
	CounterDropInvalidState     = "drop-invalid-state"
	CounterDropNodePortAddress  = "drop-nodeport-address"
)

// Counters lists them, in the order the table declares them: by name,
// the order kernel.ReadCounters returns them in.
var Counters = []string{CounterDropInvalidState, CounterDropNoLocalEndpoints, CounterDropNodePortAddress,
	CounterDropSourceRange, CounterDropUnallocated, CounterRejectNoEndpoints, CounterRejectUnknownPort}

// CounterReason splits a counter's name into its verdict ("drop" or
// "reject") and its reason ("source-range"); ok is false for a name of no
// such form.
func CounterReason(name string) (verdict, reason string, ok bool) {
	for _, v := range []string{"drop", "reject"} {
		if r, found := strings.CutPrefix(name, v+"-"); found && r != "" {
			return v, r, true
		}
	}
	return "", "", false
}
