package explain

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// dropReason says why o was dropped or rejected, from the step that did
// it: the table's own drops in words; any other rule by its comment, or
// else its text, so that a rule this package does not know (a newer
// nftproxy's, or someone else's) is still named.
func (x *explainer) dropReason(o trace.Outcome) string {
	if len(o.Steps) == 0 {
		return "dropped by the base chain's policy"
	}
	last := o.Steps[len(o.Steps)-1]
	if (last.Chain == nft.ChainReject || last.Chain == nft.ChainNoLocal) && len(o.Steps) > 1 {
		last = o.Steps[len(o.Steps)-2] // the entry that sent it to reject-chain or no-local-endpoints
	}
	switch comment := ruleComment(x.t, last.Chain, last.Rule); {
	case last.Set == nft.MapNoEndpointServices || last.Set == nft.MapNoEndpointNodePorts:
		return x.noEndpointReason(last.Element)
	case comment == commentSourceRange:
		return x.sourceRangeReason()
	case comment == commentNoLocal:
		return x.noLocalReason()
	case comment == commentUnallocated:
		return fmt.Sprintf("unallocated ClusterIP: %s is in the ServiceCIDR %s, but no Service holds it: new connections "+
			"are dropped, as kube-proxy does (a Service that was just deleted, or a wrong address)",
			x.r.Dst.Addr(), valueString(last.Element))
	case comment == commentWrongPort:
		return fmt.Sprintf("port not defined: %s is a ClusterIP, but no Service has %s port %d on it",
			x.r.Dst.Addr(), protoName(x.r.Proto), x.r.Dst.Port())
	case comment != "":
		return fmt.Sprintf("%s (%s rule %d of chain %s)", comment, o.Verdict, last.Rule, last.Chain)
	}
	return fmt.Sprintf("%s by rule %d of chain %s: %s", verbed(o.Verdict), last.Rule, last.Chain, ruleText(x.t, last.Chain, last.Rule))
}

func verbed(v trace.Verdict) string {
	if v == trace.Reject {
		return "rejected"
	}
	return "dropped"
}

// serviceText names the Service port the packet reached.
func (x *explainer) serviceText() string {
	if x.svc == nil {
		return "the Service"
	}
	return fmt.Sprintf("%s:%s (%s)", x.svc.key(), x.svc.Port, x.svc.Entry)
}

// noLocalReason explains the drop of external traffic under
// externalTrafficPolicy: Local on a node without a local endpoint.
func (x *explainer) noLocalReason() string {
	text := fmt.Sprintf("%s: externalTrafficPolicy: Local, and no endpoint of it is on this node: traffic from outside "+
		"the cluster is dropped here (Pods and the node itself would still reach endpoints on other nodes)", x.serviceText())
	if x.svc == nil {
		return text
	}
	if svc := x.o.Cluster.service(x.svc.Namespace, x.svc.Name); svc != nil && svc.HealthCheckNodePort != 0 {
		text += fmt.Sprintf("; its healthCheckNodePort %d answers 503 on this node, so a load balancer that checks it "+
			"sends no traffic here", svc.HealthCheckNodePort)
	}
	return text
}

// noEndpointReason explains an entry of the no-endpoint maps: a Service
// port without usable endpoints is rejected; one whose endpoints are all on
// other nodes under internalTrafficPolicy: Local is dropped.
func (x *explainer) noEndpointReason(e nft.Element) string {
	if e.Verdict.Kind == nft.Drop || e.Verdict.Chain == nft.ChainNoLocal {
		return fmt.Sprintf("%s: internalTrafficPolicy: Local, and no endpoint of it is on this node: "+
			"traffic to it from this node is dropped (its endpoints are on other nodes)", x.serviceText())
	}
	return fmt.Sprintf("no endpoints: %s has no ready endpoint (nor a serving, terminating one), "+
		"so new connections are rejected at once", x.serviceText())
}

// sourceRangeReason names the source ranges the packet's source is outside.
func (x *explainer) sourceRangeReason() string {
	allowed := allowedSources(x.t, x.r.Dst, x.r.Proto)
	text := fmt.Sprintf("source %s is outside the loadBalancerSourceRanges of %s", x.src, x.serviceText())
	if len(allowed) > 0 {
		text += fmt.Sprintf(" (allowed: %s)", prefixesText(allowed))
	}
	return text
}

// allowedSources are the source ranges firewall-allow lets reach dst.
func allowedSources(t *nft.Table, dst netip.AddrPort, proto uint8) []netip.Prefix {
	s := t.Set(nft.SetFirewallAllow)
	if s == nil {
		return nil
	}
	var out []netip.Prefix
	for _, e := range s.Elements {
		if len(e.Key) == 4 && prefixOf(e.Key[0]) == netip.PrefixFrom(dst.Addr(), dst.Addr().BitLen()) &&
			e.Key[1].Num == uint32(proto) && e.Key[2].Num == uint32(dst.Port()) {
			out = append(out, prefixOf(e.Key[3]))
		}
	}
	return out
}

// valueString renders the one-part key of a set element: an address or a
// prefix.
func valueString(e nft.Element) string {
	if len(e.Key) != 1 {
		return "?"
	}
	return prefixOf(e.Key[0]).Masked().String()
}

// prefixOf is an address part of an interval set's key as a prefix: the
// compiler writes the destination as an address, the kernel reads every
// address part of an interval element back as a prefix.
func prefixOf(v nft.Value) netip.Prefix {
	if v.Prefix.IsValid() {
		return v.Prefix
	}
	return netip.PrefixFrom(v.Addr, v.Addr.BitLen())
}

// masqReasons says why the source of a masqueraded packet was rewritten:
// by the rules that asked for it (jumps to mark-for-masquerade) and the
// hairpin set.
func (x *explainer) masqReasons(steps []trace.Step) []string {
	var out []string
	add := func(s string) {
		if !strings.Contains(strings.Join(out, "\n"), s) {
			out = append(out, s)
		}
	}
	for i, s := range steps {
		switch {
		case s.Set == nft.SetHairpin:
			add("hairpin: the endpoint picked is the client itself, which would otherwise get its own packet and answer itself")
		case s.Chain == nft.ChainMarkMasq && i > 0:
			add(x.markReason(steps[i-1]))
		}
	}
	if len(out) == 0 {
		add("the packet mark asked for it (masqueradeBit)")
	}
	return out
}

// markReason says why the rule at caller jumped to mark-for-masquerade.
func (x *explainer) markReason(caller trace.Step) string {
	switch comment := ruleComment(x.t, caller.Chain, caller.Rule); {
	case caller.Chain == nft.ChainMarkNonCluster:
		return fmt.Sprintf("ClusterIP traffic from outside the cluster CIDRs (%s): masqueraded so that the endpoint's "+
			"reply comes back through this node", prefixesText(clusterCIDRs(x.t)))
	case caller.Chain == nft.ChainServices:
		return "masqueradeAll: every connection to a Service is masqueraded"
	case comment == commentLocalMasq:
		return "sent by this node itself to an externalTrafficPolicy: Local entry: masqueraded, since its source " +
			"address would not route back from another node"
	case caller.Chain == nft.ChainExternal || caller.Chain == nft.ChainNodePort || strings.HasPrefix(caller.Chain, "external-"):
		return "traffic to a NodePort, externalIP or load-balancer IP under externalTrafficPolicy: Cluster: " +
			"masqueraded so that the reply comes back through this node, as the endpoint may be on another"
	case comment != "":
		return fmt.Sprintf("%s (rule %d of chain %s)", comment, caller.Rule, caller.Chain)
	}
	return fmt.Sprintf("marked for masquerading by rule %d of chain %s: %s", caller.Rule, caller.Chain,
		ruleText(x.t, caller.Chain, caller.Rule))
}
