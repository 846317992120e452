package explain

// Schema names the JSON format of Report and ServiceReport; it changes
// only when a field changes meaning or goes away (docs/trace.md).
const Schema = "nftproxy.io/trace/v1"

// Report is where one packet goes.
type Report struct {
	// Schema and Source are left out of the reports inside a
	// ServiceReport, which has its own.
	Schema string `json:"schema,omitempty"`
	// Source is where the table came from: "kernel" (read from this
	// network namespace) or "manifests" (compiled).
	Source string `json:"source,omitempty"`
	Family string `json:"family"` // "ip" or "ip6": the table traced
	Packet Packet `json:"packet"`
	From   From   `json:"from"`
	// Service is the Service port the destination belongs to; nil when it
	// is no Service's.
	Service *ServicePort `json:"service"`
	// Outcomes are every way the packet can go; their probabilities add
	// up to 1.
	Outcomes []Outcome `json:"outcomes"`
	// Notes are facts worth knowing that are no outcome (what trace
	// cannot see).
	Notes []string `json:"notes,omitempty"`
}

// Packet is the first packet of a new connection.
type Packet struct {
	Proto   string `json:"proto"` // "tcp", "udp" or "sctp"
	Src     string `json:"src"`   // address
	SrcPort uint16 `json:"srcPort,omitempty"`
	Dst     string `json:"dst"` // address
	DstPort uint16 `json:"dstPort"`
}

// From is where the packet comes from.
type From struct {
	// Origin is "pod" (a source in the cluster CIDRs), "node" (the node
	// itself) or "external" (anything else).
	Origin string `json:"origin"`
	// Assumed is true when Origin was inferred from the source address
	// rather than given; Why says how.
	Assumed bool   `json:"assumed"`
	Why     string `json:"why"`
}

// ServicePort names one port of one Service, and how the packet reached it.
type ServicePort struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Port      string `json:"port"` // the port's name, or its number when unnamed
	// Entry is how it is reached: "ClusterIP", "NodePort", "externalIP",
	// "load-balancer IP", or "externalIP or load-balancer IP" when the
	// table alone cannot tell.
	Entry string `json:"entry"`
}

func (sp *ServicePort) key() string { return sp.Namespace + "/" + sp.Name }

// Outcome is one way the packet goes.
type Outcome struct {
	// Probability is exact, as a fraction ("1/3"); Share is the same as a
	// float, for sorting and display.
	Probability string  `json:"probability"`
	Share       float64 `json:"share"`
	// Verdict is "accept" (delivered or forwarded), "drop" or "reject"
	// (dropped, and the client told).
	Verdict string `json:"verdict"`
	// Destination is where the packet goes, after DNAT when DNAT is true.
	Destination string `json:"destination"`
	DNAT        bool   `json:"dnat"`
	// Endpoint describes the destination when DNAT chose an endpoint.
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	// Masquerade is set when the source is masqueraded, with the reasons.
	Masquerade *Masquerade `json:"masquerade,omitempty"`
	// Reason says why in words: for drop and reject, and for a packet that
	// no rule of ours changes.
	Reason string `json:"reason,omitempty"`
	// Counter is the counter object of the table that the drop or reject
	// counts into (nftproxy_packets_dropped_total and
	// nftproxy_packets_rejected_total, by its reason).
	Counter string `json:"counter,omitempty"`
	// CounterPackets is what that counter has counted so far, when the
	// tables were read from the kernel.
	CounterPackets *uint64 `json:"counterPackets,omitempty"`
	// Affinity is set for a Service with sessionAffinity: ClientIP.
	Affinity *Affinity `json:"affinity,omitempty"`
	// Notes explain commented rules met on the way that no other field
	// does: the table's own in words ("short-circuit pod traffic":
	// externalTrafficPolicy: Local does not hold Pods back), others quoted.
	Notes []string `json:"notes,omitempty"`
	Steps []Step   `json:"steps"`
}

// Endpoint is the endpoint a connection is DNATed to.
type Endpoint struct {
	Address string `json:"address"` // address:port
	// Node is the endpoint's node: the table does not record it;
	// manifests or the API server do. "" when unknown, or when its
	// EndpointSlice names none (NodeKnown is then true).
	Node string `json:"node,omitempty"`
	// Local is true when the endpoint is on this node, as far as the table
	// or the cluster's objects tell; NodeKnown says whether they told.
	Local     bool `json:"local"`
	NodeKnown bool `json:"nodeKnown"`
	// Conditions are the EndpointSlice conditions, when known: "ready",
	// "serving", "terminating".
	Conditions []string `json:"conditions,omitempty"`
}

// Masquerade is why the source address is rewritten to the node's.
type Masquerade struct {
	Reasons []string `json:"reasons"`
}

// Affinity is what session affinity does to the choice.
type Affinity struct {
	// TimeoutSeconds is how long the choice is remembered after the
	// client's last new connection to the Service port.
	TimeoutSeconds uint32 `json:"timeoutSeconds"`
	// Remembered is true when this outcome is the client's remembered
	// endpoint; ExpiresInSeconds is then how long the memory has left (0
	// when unknown).
	Remembered       bool   `json:"remembered"`
	ExpiresInSeconds uint32 `json:"expiresInSeconds,omitempty"`
	Text             string `json:"text"`
}

// Step is a rule that matched on the way.
type Step struct {
	Hook  string `json:"hook"`
	Chain string `json:"chain"`
	Rule  int    `json:"rule"` // index in the chain, from 0
	Text  string `json:"text"` // the rule as nft lists it
	// Set and Element are the set or map element the rule's lookup found,
	// as nft lists it.
	Set     string `json:"set,omitempty"`
	Element string `json:"element,omitempty"`
}
