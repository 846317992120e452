package main

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// The baseline: the same cluster in upstream kube-proxy's nftables shape
// (pkg/proxy/nftables, v1.31 to v1.36), written as the "add ..." commands
// kube-proxy pipes to `nft -f -`. Per Service port: a service chain whose
// last rule picks an endpoint with an anonymous
// `numgen random mod N vmap { 0 : goto endpoint-..., ... }`, one chain per
// endpoint with the hairpin masquerade and the dnat, an external chain for
// NodePorts and LoadBalancer IPs, and per-endpoint affinity sets for
// ClientIP session affinity; plus kube-proxy's service-ips and
// service-nodeports verdict maps. Only the shape matters for the
// comparison: the kernel's cost is in the anonymous sets and the number of
// chains and rules.

// kpOptions are the node settings the kube-proxy rules depend on.
type kpOptions struct {
	ClusterCIDR string     // e.g. 10.0.0.0/8: ClusterIP traffic from elsewhere is masqueraded
	ServiceCIDR string     // e.g. 10.96.0.0/12: unallocated ClusterIPs are dropped
	NodeIP      netip.Addr // the address NodePorts answer on
	NodeName    string     // endpoints on this node are local (externalTrafficPolicy: Local)
}

const kpTable = "ip kube-proxy"

// kpBase is kube-proxy's fixed skeleton, as its proxier writes it.
const kpBase = `add table ip kube-proxy { comment "rules for kube-proxy" ; }
add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add set ip kube-proxy nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }
add map ip kube-proxy firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
add map ip kube-proxy no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
add map ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }
add chain ip kube-proxy cluster-ips-check
add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }
add chain ip kube-proxy filter-forward { type filter hook forward priority 0 ; }
add chain ip kube-proxy filter-input { type filter hook input priority 0 ; }
add chain ip kube-proxy filter-output { type filter hook output priority 0 ; }
add chain ip kube-proxy firewall-check
add chain ip kube-proxy mark-for-masquerade
add chain ip kube-proxy masquerading
add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip kube-proxy nodeport-endpoints-check
add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
add chain ip kube-proxy services
add chain ip kube-proxy service-endpoints-check
add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule ip kube-proxy cluster-ips-check ip daddr { %[1]s } drop comment "Drop traffic to unallocated ClusterIPs"
add rule ip kube-proxy filter-prerouting-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-forward ct state new jump service-endpoints-check
add rule ip kube-proxy filter-forward ct state new jump cluster-ips-check
add rule ip kube-proxy filter-input ct state new jump nodeport-endpoints-check
add rule ip kube-proxy filter-input ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-output ct state new jump cluster-ips-check
add rule ip kube-proxy firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
add rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000
add rule ip kube-proxy masquerading mark and 0x4000 == 0 return
add rule ip kube-proxy masquerading mark set mark xor 0x4000
add rule ip kube-proxy masquerading masquerade fully-random
add rule ip kube-proxy nat-output jump services
add rule ip kube-proxy nat-postrouting jump masquerading
add rule ip kube-proxy nat-prerouting jump services
add rule ip kube-proxy nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
add rule ip kube-proxy reject-chain reject
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
add element ip kube-proxy nodeport-ips { %[2]s }
add rule ip kube-proxy service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
`

// kpPort is one Service port with its endpoints, as kube-proxy sees it.
type kpPort struct {
	svc   *model.Service
	port  model.ServicePort
	proto string // tcp, udp, sctp
	eps   []kpEndpoint
}

type kpEndpoint struct {
	addr  netip.Addr
	port  uint16
	local bool
}

// name is kube-proxy's servicePortName text: namespace/name/proto/port.
func (p *kpPort) name() string {
	return fmt.Sprintf("%s/%s/%s/%s", p.svc.Namespace, p.svc.Name, p.proto, p.port.Name)
}

// kpChain is kube-proxy's chain naming: prefix, a hash that keeps names
// unique after truncation, and the readable name.
func kpChain(prefix, name string) string {
	sum := sha256.Sum256([]byte(name))
	return prefix + "-" + base32.StdEncoding.EncodeToString(sum[:])[:8] + "-" + name
}

func (p *kpPort) serviceChain() string  { return kpChain("service", p.name()) }
func (p *kpPort) externalChain() string { return kpChain("external", p.name()) }
func (p *kpPort) localChain() string    { return kpChain("local", p.name()) }

func (p *kpPort) endpointName(e kpEndpoint) string {
	return fmt.Sprintf("%s__%s/%d", p.name(), e.addr, e.port)
}
func (p *kpPort) endpointChain(e kpEndpoint) string {
	return kpChain("endpoint", p.endpointName(e))
}
func (p *kpPort) affinitySet(e kpEndpoint) string {
	return kpChain("affinity", p.endpointName(e))
}

// kpPorts lists the Service ports of snap with their ready endpoints, in the
// order of snap.Services; keys limits it to those Services when not nil.
func kpPorts(snap *model.Snapshot, o kpOptions, keys map[string]bool) []*kpPort {
	slices := map[string][]*model.EndpointSlice{}
	for i := range snap.Slices {
		s := &snap.Slices[i]
		slices[s.Namespace+"/"+s.Service] = append(slices[s.Namespace+"/"+s.Service], s)
	}
	var out []*kpPort
	for i := range snap.Services {
		svc := &snap.Services[i]
		if keys != nil && !keys[svc.Key()] {
			continue
		}
		for _, port := range svc.Ports {
			p := &kpPort{svc: svc, port: port, proto: strings.ToLower(string(port.Protocol))}
			p.eps = kpEndpoints(slices[svc.Key()], port, o.NodeName)
			out = append(out, p)
		}
	}
	return out
}

func kpEndpoints(slices []*model.EndpointSlice, port model.ServicePort, node string) []kpEndpoint {
	var out []kpEndpoint
	for _, s := range slices {
		for _, sp := range s.Ports {
			if sp.Name != port.Name || sp.Protocol != port.Protocol {
				continue
			}
			for _, e := range s.Endpoints {
				if e.Ready && len(e.Addresses) > 0 {
					out = append(out, kpEndpoint{addr: e.Addresses[0], port: sp.Port, local: e.NodeName == node})
				}
			}
		}
	}
	return out
}

// writeKubeProxy writes the whole ruleset of snap as one transaction.
func writeKubeProxy(w io.Writer, snap *model.Snapshot, o kpOptions) error {
	if _, err := fmt.Fprintf(w, kpBase, o.ServiceCIDR, o.NodeIP); err != nil {
		return err
	}
	for _, p := range kpPorts(snap, o, nil) {
		if err := writePort(w, p, o); err != nil {
			return err
		}
	}
	return nil
}

// writePort writes one Service port: its chains, rules and map elements.
func writePort(w io.Writer, p *kpPort, o kpOptions) error {
	ip := p.svc.ClusterIPs[0]
	fmt.Fprintf(w, "add element %s cluster-ips { %s }\n", kpTable, ip)
	if len(p.eps) == 0 {
		_, err := fmt.Fprintf(w, "add element %s no-endpoint-services { %s . %s . %d comment \"%s\" : goto reject-chain }\n",
			kpTable, ip, p.proto, p.port.Port, p.name())
		return err
	}
	for _, e := range p.eps { // chains exist before the rules that jump to them
		writeEndpointChain(w, p, e, false)
	}
	writeServiceChain(w, p, o, false)
	fmt.Fprintf(w, "add element %s service-ips { %s . %s . %d : goto %s }\n", kpTable, ip, p.proto, p.port.Port, p.serviceChain())
	return writeExternal(w, p, o)
}

// writeServiceChain writes the service chain; flush rewrites an existing
// one, as kube-proxy's partial sync does.
func writeServiceChain(w io.Writer, p *kpPort, o kpOptions, flush bool) {
	chain := p.serviceChain()
	writeChainHead(w, chain, flush)
	fmt.Fprintf(w, "add rule %s %s ip daddr %s %s dport %d ip saddr != %s jump mark-for-masquerade\n",
		kpTable, chain, p.svc.ClusterIPs[0], p.proto, p.port.Port, o.ClusterCIDR)
	if p.svc.AffinitySeconds > 0 {
		for _, e := range p.eps {
			fmt.Fprintf(w, "add rule %s %s ip saddr @%s goto %s\n", kpTable, chain, p.affinitySet(e), p.endpointChain(e))
		}
	}
	fmt.Fprintf(w, "add rule %s %s %s\n", kpTable, chain, numgenVmap(p, p.eps))
}

func writeChainHead(w io.Writer, chain string, flush bool) {
	fmt.Fprintf(w, "add chain %s %s\n", kpTable, chain)
	if flush {
		fmt.Fprintf(w, "flush chain %s %s\n", kpTable, chain)
	}
}

// numgenVmap is kube-proxy's endpoint choice: one anonymous verdict map per
// Service port.
func numgenVmap(p *kpPort, eps []kpEndpoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "numgen random mod %d vmap { ", len(eps))
	for i, e := range eps {
		if i > 0 {
			b.WriteString(" , ")
		}
		fmt.Fprintf(&b, "%d : goto %s", i, p.endpointChain(e))
	}
	b.WriteString(" }")
	return b.String()
}

func writeEndpointChain(w io.Writer, p *kpPort, e kpEndpoint, flush bool) {
	chain := p.endpointChain(e)
	if p.svc.AffinitySeconds > 0 {
		fmt.Fprintf(w, "add set %s %s { type ipv4_addr ; flags dynamic,timeout ; timeout %ds ; }\n",
			kpTable, p.affinitySet(e), p.svc.AffinitySeconds)
	}
	writeChainHead(w, chain, flush)
	fmt.Fprintf(w, "add rule %s %s ip saddr %s jump mark-for-masquerade\n", kpTable, chain, e.addr)
	if p.svc.AffinitySeconds > 0 {
		fmt.Fprintf(w, "add rule %s %s update @%s { ip saddr }\n", kpTable, chain, p.affinitySet(e))
	}
	fmt.Fprintf(w, "add rule %s %s meta l4proto %s dnat to %s:%d\n", kpTable, chain, p.proto, e.addr, e.port)
}

// writeExternal writes the external chain of a NodePort or LoadBalancer
// port and its map elements. externalTrafficPolicy: Local short-circuits pod
// and node traffic and sends the rest to the local endpoints only.
func writeExternal(w io.Writer, p *kpPort, o kpOptions) error {
	if !p.external() {
		return nil
	}
	ext := p.externalChain()
	writeExternalChains(w, p, o, false)
	for _, ip := range append(append([]netip.Addr(nil), p.svc.ExternalIPs...), p.svc.LoadBalancerIPs...) {
		fmt.Fprintf(w, "add element %s service-ips { %s . %s . %d : goto %s }\n", kpTable, ip, p.proto, p.port.Port, ext)
	}
	var err error
	if p.port.NodePort != 0 {
		_, err = fmt.Fprintf(w, "add element %s service-nodeports { %s . %d : goto %s }\n", kpTable, p.proto, p.port.NodePort, ext)
	}
	return err
}

// external reports whether the port is reachable from outside the cluster.
func (p *kpPort) external() bool {
	return p.port.NodePort != 0 || len(p.svc.LoadBalancerIPs) > 0 || len(p.svc.ExternalIPs) > 0
}

func writeExternalChains(w io.Writer, p *kpPort, o kpOptions, flush bool) {
	ext, svc := p.externalChain(), p.serviceChain()
	writeChainHead(w, ext, flush)
	if !p.svc.ExternalLocal {
		fmt.Fprintf(w, "add rule %s %s jump mark-for-masquerade\n", kpTable, ext)
		fmt.Fprintf(w, "add rule %s %s goto %s\n", kpTable, ext, svc)
		return
	}
	fmt.Fprintf(w, "add rule %s %s ip saddr %s goto %s comment \"short-circuit pod traffic\"\n", kpTable, ext, o.ClusterCIDR, svc)
	fmt.Fprintf(w, "add rule %s %s fib saddr type local jump mark-for-masquerade comment \"masquerade local traffic\"\n", kpTable, ext)
	fmt.Fprintf(w, "add rule %s %s fib saddr type local goto %s comment \"short-circuit local traffic\"\n", kpTable, ext, svc)
	writeLocalChain(w, p, ext, flush)
}

// writeLocalChain sends external traffic to the local endpoints, or drops
// it when there are none, as kube-proxy does.
func writeLocalChain(w io.Writer, p *kpPort, ext string, flush bool) {
	var local []kpEndpoint
	for _, e := range p.eps {
		if e.local {
			local = append(local, e)
		}
	}
	if len(local) == 0 {
		fmt.Fprintf(w, "add rule %s %s drop comment \"no local endpoints\"\n", kpTable, ext)
		return
	}
	chain := p.localChain()
	writeChainHead(w, chain, flush)
	fmt.Fprintf(w, "add rule %s %s %s\n", kpTable, chain, numgenVmap(p, local))
	fmt.Fprintf(w, "add rule %s %s goto %s\n", kpTable, ext, chain)
}

// writeKubeProxyChange writes kube-proxy's partial sync for the Services in
// changed, going from old to cur: each changed Service port's service chain
// and endpoint chains are rewritten, endpoint chains (and affinity sets) no
// longer used are flushed and deleted. Map elements are unchanged: only
// endpoints moved.
func writeKubeProxyChange(w io.Writer, old, cur *model.Snapshot, changed map[string]bool, o kpOptions) error {
	before := map[string]*kpPort{}
	for _, p := range kpPorts(old, o, changed) {
		before[p.name()] = p
	}
	for _, p := range kpPorts(cur, o, changed) {
		keep := map[string]bool{}
		for _, e := range p.eps {
			writeEndpointChain(w, p, e, true)
			keep[p.endpointChain(e)] = true
		}
		writeServiceChain(w, p, o, true)
		if p.external() {
			writeExternalChains(w, p, o, true)
		}
		prev, ok := before[p.name()]
		if !ok {
			continue
		}
		for _, e := range staleEndpoints(prev, keep) {
			chain := prev.endpointChain(e)
			fmt.Fprintf(w, "flush chain %s %s\ndelete chain %s %s\n", kpTable, chain, kpTable, chain)
			if prev.svc.AffinitySeconds > 0 {
				fmt.Fprintf(w, "delete set %s %s\n", kpTable, prev.affinitySet(e))
			}
		}
	}
	return nil
}

// staleEndpoints are prev's endpoints whose chains are not in keep.
func staleEndpoints(prev *kpPort, keep map[string]bool) []kpEndpoint {
	var out []kpEndpoint
	for _, e := range prev.eps {
		if !keep[prev.endpointChain(e)] {
			out = append(out, e)
		}
	}
	return out
}
