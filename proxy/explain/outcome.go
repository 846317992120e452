package explain

import (
	"fmt"
	"iter"
	"net/netip"
	"slices"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// explainer turns the tracer's outcomes of one packet into words.
type explainer struct {
	w   world
	t   *nft.Table
	o   Options
	r   Request
	src netip.Addr
	svc *ServicePort
	// affinity is set when an outcome met session affinity, nodeUnknown
	// when an endpoint's node is unknown, routed when one is dropped or
	// rejected in the forward hook without DNAT: for notes.
	affinity, nodeUnknown, routed bool
	// hashed is set when an outcome was picked by a Maglev table's hash
	// without a source port.
	hashed bool
}

func (x *explainer) outcome(o trace.Outcome) Outcome {
	share, _ := o.Prob.Float64()
	out := Outcome{Probability: o.Prob.RatString(), Share: share, Verdict: o.Verdict.String(),
		Destination: o.Dest().String(), DNAT: x.dnat(o.Steps), Steps: x.steps(o.Steps)}
	switch {
	case o.Verdict != trace.Accept:
		out.Reason, out.Counter = x.dropReason(o), o.Counter
		if n, ok := x.o.Counted[x.t.Family][o.Counter]; ok {
			out.CounterPackets = &n
		}
	case out.DNAT:
		out.Endpoint = x.endpoint(o)
	default:
		out.Reason = x.untouched()
	}
	if o.Masqueraded {
		out.Masquerade = &Masquerade{Reasons: x.masqReasons(o.Steps)}
	}
	out.Affinity = x.affinityOf(o.Steps)
	x.hashed = x.hashed || x.r.SrcPort == 0 && x.hashStep(o.Steps)
	x.routed = x.routed || o.Verdict != trace.Accept && !out.DNAT && forwarded(o.Steps)
	out.Notes = x.comments(o.Steps, out.Reason)
	return out
}

// notes are what the report's reader should know about what trace could
// not see.
func (x *explainer) notes() []string {
	var out []string
	if x.affinity && !x.o.MemoryRead {
		out = append(out, "the kernel's session-affinity memory was not read: a client that connected within the "+
			"timeout goes back to the endpoint it got then, whatever the probabilities above")
	}
	if x.routed {
		out = append(out, fmt.Sprintf("a packet to %s that is not DNATed reaches the forward hook only if this node has a route "+
			"to it (usually its default route); without one the kernel answers \"network unreachable\" first", x.r.Dst.Addr()))
	}
	if x.hashed {
		out = append(out, "the Service picks endpoints by Maglev consistent hashing of the source and destination addresses "+
			"and ports: the shares above are its table's; give the source port (--sport, or --src IP:PORT) for the one endpoint")
	}
	if x.nodeUnknown {
		out = append(out, "the table does not record which node an endpoint is on: manifests (-f) or the API server (--kubeconfig) tell")
	}
	return out
}

// forwarded reports whether the steps went through the forward hook.
func forwarded(steps []trace.Step) bool {
	for _, s := range steps {
		if s.Hook == "forward" {
			return true
		}
	}
	return false
}

// hashStep reports whether one of the steps picked by a hash (Maglev).
func (x *explainer) hashStep(steps []trace.Step) bool {
	for st := range stmts(x.t, steps) {
		if d, ok := st.(nft.DNATMap); ok && d.Hash.Used() {
			return true
		}
	}
	return false
}

// dnat reports whether one of the steps rewrote the destination.
func (x *explainer) dnat(steps []trace.Step) bool {
	for st := range stmts(x.t, steps) {
		switch st.(type) {
		case nft.DNAT, nft.DNATMap:
			return true
		}
	}
	return false
}

// stmts returns the statements of the rules of t that the steps went
// through.
func stmts(t *nft.Table, steps []trace.Step) iter.Seq[nft.Stmt] {
	return func(yield func(nft.Stmt) bool) {
		for _, s := range steps {
			r := rule(t, s.Chain, s.Rule)
			if r == nil {
				continue
			}
			for _, st := range r.Stmts {
				if !yield(st) {
					return
				}
			}
		}
	}
}

func (x *explainer) steps(steps []trace.Step) []Step {
	out := make([]Step, len(steps))
	for i, s := range steps {
		out[i] = Step{Hook: s.Hook, Chain: s.Chain, Rule: s.Rule, Text: ruleText(x.t, s.Chain, s.Rule), Set: s.Set}
		if set := x.t.Set(s.Set); set != nil {
			out[i].Element = set.ElementText(s.Element)
		}
	}
	return out
}

// endpoint describes the endpoint o was DNATed to.
func (x *explainer) endpoint(o trace.Outcome) *Endpoint {
	ep := &Endpoint{Address: o.Dest().String()}
	for _, s := range o.Steps {
		if s.Chain == nft.ChainPickLocalEndpoint || s.Chain == nft.ChainPickNodePortLocalEndpoint || strings.HasPrefix(s.Chain, "local-") {
			ep.Local, ep.NodeKnown = true, true // picked from this node's endpoints
		}
	}
	x.o.Cluster.describe(x.svc, ep, o.Daddr)
	x.nodeUnknown = x.nodeUnknown || !ep.NodeKnown
	return ep
}

// untouched says why an accepted packet kept its destination.
func (x *explainer) untouched() string {
	d := x.r.Dst
	if x.svc != nil {
		return fmt.Sprintf("it matched the entry of %s:%s (%s), but no rule rewrote its destination: it goes on unchanged",
			x.svc.key(), x.svc.Port, x.svc.Entry)
	}
	if np, ok := x.nodePortElsewhere(); ok {
		return np
	}
	if owner := x.addressOwner(d.Addr()); owner != "" {
		return fmt.Sprintf("%s is an address of %s, but no Service port there is %s/%d: nftproxy does not change this packet",
			d.Addr(), owner, protoName(x.r.Proto), d.Port())
	}
	return "not a Service address: nftproxy does not change it"
}

// nodePortElsewhere says when the destination port is a NodePort but the
// address is not one that accepts NodePorts (127.0.0.1, or an address
// nodePortAddresses leaves out).
func (x *explainer) nodePortElsewhere() (string, bool) {
	key := []nft.Value{{Num: uint32(x.r.Proto)}, {Num: uint32(x.r.Dst.Port())}}
	for _, set := range nft.NodePortEntrySets {
		if e, ok := find(x.t, set, key); ok {
			sp, _ := parseComment(e.Comment)
			return fmt.Sprintf("%s/%d is the NodePort of %s:%s, but %s does not accept NodePorts (nodeport-ips: %s): "+
				"nftproxy does not change this packet", protoName(x.r.Proto), x.r.Dst.Port(), sp.key(), sp.Port,
				x.r.Dst.Addr(), addrsText(nodePortAddrs(x.t))), true
		}
	}
	return "", false
}

// addressOwner names the Service with some entry on address a, or "a
// Service" when the table holds a only as a ClusterIP.
func (x *explainer) addressOwner(a netip.Addr) string {
	for _, set := range nft.ServiceIPEntrySets {
		if s := x.t.Set(set); s != nil {
			for _, e := range s.Elements {
				if e.Key[0].Addr == a {
					if sp, ok := parseComment(e.Comment); ok {
						return "Service " + sp.key()
					}
					return "a Service"
				}
			}
		}
	}
	if contains(x.t, nft.SetClusterIPs, a) {
		return "a Service"
	}
	return ""
}

// comments explain the rules met on the way that are not already the
// reason or a masquerading reason, from their comments: the table's own in
// words, any other quoted.
func (x *explainer) comments(steps []trace.Step, reason string) []string {
	var out []string
	for _, s := range steps {
		c := ruleComment(x.t, s.Chain, s.Rule)
		if c == "" || strings.Contains(reason, c) || explained[c] {
			continue
		}
		text, ok := commentWords[c]
		if !ok {
			text = fmt.Sprintf("rule %d of chain %s: %q", s.Rule, s.Chain, c)
		}
		if !slices.Contains(out, text) {
			out = append(out, text)
		}
	}
	return out
}

// explained are the comments of rules whose effect a reason says.
var explained = map[string]bool{commentNoLocal: true, commentSourceRange: true, commentWrongPort: true, commentLocalMasq: true,
	commentUnallocated: true}

// commentWords say what the table's own commented rules mean.
var commentWords = map[string]string{
	commentPodShortcut:   "externalTrafficPolicy: Local does not hold Pods back: they reach every endpoint",
	commentLocalShortcut: "externalTrafficPolicy: Local does not hold the node itself back: it reaches every endpoint",
}
