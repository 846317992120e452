package compile

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/nft"
)

// loadBalancerSourceRanges are enforced with ONE interval set per family,
// firewall-allow, of (load-balancer IP . protocol . port . source prefix),
// looked up from one fixed rule: traffic to a restricted load-balancer IP
// and port (firewall-ips sends it to firewall-allow-check, in the filter
// hooks before DNAT) goes on when its source is allowed and is dropped
// otherwise. Nothing per Service is a set.

// firewall restricts the sources that may reach ref's load-balancer IPs.
func (c *compiler) firewall(b *builder, ref portRef) {
	if len(ref.svc.LoadBalancerSourceRanges) == 0 {
		return
	}
	var lbIPs []netip.Addr
	fields := map[netip.Addr]string{}
	for i, ip := range ref.svc.LoadBalancerIPs {
		if nft.FamilyOf(ip) == b.family {
			lbIPs = append(lbIPs, ip)
			fields[ip] = fmt.Sprintf("status.loadBalancer.ingress[%d].ip", i)
		}
	}
	allowed := c.allowedSources(b.family, ref.svc.LoadBalancerSourceRanges, lbIPs)
	for _, lb := range lbIPs {
		c.element(b, ref, nft.MapFirewallIPs, fields[lb], ref.key(lb), nft.GotoChain(nft.ChainFirewallAllow))
		for _, p := range allowed {
			b.addElement(nft.SetFirewallAllow, nft.Element{Key: []nft.Value{{Addr: lb}, {Num: uint32(ref.proto)}, {Num: uint32(ref.port.Port)}, {Prefix: p}}})
		}
	}
}

// allowedSources are the source ranges of family f, plus the load-balancer
// IPs themselves when a range holds one of the node's addresses (traffic
// the node sends to its own load-balancer IP may carry that IP as source),
// without ranges that another one covers: elements of an interval set must
// not overlap.
func (c *compiler) allowedSources(f nft.Family, ranges []netip.Prefix, lbIPs []netip.Addr) []netip.Prefix {
	var out []netip.Prefix
	allowNode := false
	for _, r := range ranges {
		if nft.FamilyOf(r.Addr()) != f {
			continue
		}
		out = append(out, r.Masked())
		for _, ip := range c.node.ips {
			allowNode = allowNode || r.Contains(ip)
		}
	}
	if allowNode {
		for _, ip := range lbIPs {
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return outermost(out)
}

// outermost drops duplicates and prefixes inside another one of ps, and
// sorts the rest.
func outermost(ps []netip.Prefix) []netip.Prefix {
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if a.Bits() != b.Bits() {
			return a.Bits() - b.Bits()
		}
		return a.Addr().Compare(b.Addr())
	})
	var out []netip.Prefix
	for _, p := range ps {
		covered := false
		for _, o := range out {
			covered = covered || o.Contains(p.Addr())
		}
		if !covered {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	return out
}
