package compile

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// portRef names one port of one Service while it is compiled.
type portRef struct {
	svc    *model.Service
	port   model.ServicePort
	index  int
	proto  uint8
	object string
	// maglev: the port picks endpoints by a Maglev table (maglev.go).
	maglev bool
}

func (p portRef) chainSuffix() string {
	return fmt.Sprintf("%s/%s/%s/%s", p.svc.Namespace, p.svc.Name, strings.ToLower(string(p.port.Protocol)), p.port.Label())
}

func (p portRef) serviceChain() string  { return "service-" + p.chainSuffix() }
func (p portRef) externalChain() string { return "external-" + p.chainSuffix() }

// comment names the Service port on the elements of the Service maps
// ("demo/web:http"): the only place the table keeps which Service an
// entry belongs to, for `nft list` readers and `nftproxy trace`.
func (p portRef) comment() string { return p.svc.Key() + ":" + p.port.Label() }

func (p portRef) key(ip netip.Addr) []nft.Value {
	return []nft.Value{{Addr: ip}, {Num: uint32(p.proto)}, {Num: uint32(p.port.Port)}}
}

func (p portRef) nodePortKey() []nft.Value {
	return []nft.Value{{Num: uint32(p.proto)}, {Num: uint32(p.port.NodePort)}}
}

var protoNumbers = map[model.Protocol]uint8{model.TCP: nft.ProtoTCP, model.UDP: nft.ProtoUDP, model.SCTP: nft.ProtoSCTP}

// service compiles every port of svc into b's family.
func (c *compiler) service(b *builder, svc *model.Service) {
	clusterIPs := addrsOf(svc.ClusterIPs, b.family)
	if len(clusterIPs) == 0 {
		return
	}
	for _, ip := range clusterIPs {
		b.addElement(nft.SetClusterIPs, nft.Element{Key: []nft.Value{{Addr: ip}}})
	}
	// Session affinity keeps its own chains and picks at random: a client
	// remembered goes back to its endpoint on the node that remembers it,
	// which Maglev could not improve on. Only an explicit annotation is
	// worth a warning.
	maglev := c.usesMaglev(svc) && svc.AffinitySeconds == 0
	if svc.AffinitySeconds > 0 && svc.LoadBalancing == LoadBalancingMaglev {
		c.problem(svc, "metadata.annotations["+model.AnnotationLoadBalancing+"]",
			"sessionAffinity ClientIP: Maglev is not used, the Service's ports pick at random")
	}
	for i, port := range svc.Ports {
		proto, ok := protoNumbers[port.Protocol]
		if !ok {
			c.problem(svc, fmt.Sprintf("spec.ports[%d].protocol", i), fmt.Sprintf("unsupported protocol %q", port.Protocol))
			continue
		}
		ref := portRef{svc: svc, port: port, index: i, proto: proto, object: c.object, maglev: maglev}
		c.servicePort(b, ref, clusterIPs)
	}
}

func (c *compiler) servicePort(b *builder, ref portRef, clusterIPs []netip.Addr) {
	sets, hairpin := c.endpointSets(ref, b.family)
	external := externalIPs(ref.svc, b.family)
	c.firewall(b, ref)
	if ref.port.NodePort != 0 && c.opts.DropNodePortsOnOtherAddresses {
		b.addElement(nft.SetNodePortsInUse, nft.Element{Key: ref.nodePortKey()})
	}
	if !sets.any {
		c.noEndpoints(b, ref, clusterIPs, external)
		return
	}
	if len(sets.local) == 0 {
		b.countNoLocal(ref.svc)
	}
	// Hairpin traffic (a pod reaching itself through a Service) is DNATed
	// on the pod's own node only: endpoints on other nodes need no element.
	// An endpoint that names no node might be here.
	for _, ep := range hairpin {
		b.addElement(nft.SetHairpin, nft.Element{Key: []nft.Value{{Addr: ep.addr}, {Addr: ep.addr}}})
	}
	if ref.svc.AffinitySeconds > 0 {
		c.affinityPort(b, ref, sets, clusterIPs, external)
		return
	}
	c.listPort(b, ref, sets, clusterIPs, external)
}

// listPort puts every entry of ref's port in the set whose shared chain
// picks from the endpoint list the entry brings (lists.go): the port has no
// chain of its own.
func (c *compiler) listPort(b *builder, ref portRef, sets endpointSets, clusterIPs []netip.Addr, external []externalIP) {
	internal := sets.cluster
	if ref.svc.InternalLocal {
		internal = sets.local
	}
	for _, ip := range clusterIPs {
		c.entry(b, ref, nft.SetClusterIPPorts, "spec.clusterIPs", ref.key(ip), c.list(ref, nft.MapEndpoints, internal))
	}
	ext, lists := nft.SetExternalIPPorts, []endpointList{c.list(ref, nft.MapEndpoints, sets.cluster)}
	np, npLists := nft.SetNodePorts, []endpointList{c.list(ref, nft.MapNodePortEndpoints, sets.cluster)}
	if ref.svc.ExternalLocal {
		ext, lists = nft.SetExternalLocalIPPorts, append(lists, c.list(ref, nft.MapLocalEndpoints, sets.local))
		np, npLists = nft.SetLocalNodePorts, append(npLists, c.list(ref, nft.MapNodePortLocalEndpoints, sets.local))
	}
	for _, e := range external {
		c.entry(b, ref, ext, e.field, ref.key(e.ip), lists...)
	}
	if ref.port.NodePort != 0 {
		c.entry(b, ref, np, fmt.Sprintf("spec.ports[%d].nodePort", ref.index), ref.nodePortKey(), npLists...)
	}
}

// entry claims an element of set, one of the sets servicesRules sends to a
// shared chain, with the endpoint lists that chain picks from. An entry
// whose first list is empty has endpoints, but none for this traffic
// (internalTrafficPolicy Local without a local endpoint): it is dropped,
// not rejected, as kube-proxy does.
func (c *compiler) entry(b *builder, ref portRef, set, field string, key []nft.Value, lists ...endpointList) {
	if len(lists[0].eps) == 0 {
		noEndpoints := nft.MapNoEndpointServices
		if slices.Contains(nft.NodePortEntrySets, set) {
			noEndpoints = nft.MapNoEndpointNodePorts
		}
		c.element(b, ref, noEndpoints, field, key, nft.GotoChain(nft.ChainNoLocal))
		return
	}
	var nonEmpty []endpointList
	for _, l := range lists {
		if len(l.eps) > 0 {
			nonEmpty = append(nonEmpty, l)
		}
	}
	i := b.claimElement(set, c.key, field, nft.Element{Key: key, Comment: ref.comment()}, nonEmpty...)
	c.problems = append(c.problems, unitProblem{
		Problem: Problem{Object: ref.object, Field: field}, family: b.family, claim: i})
}

// list is the endpoint list eps for the endpoint maps of kind m: a Maglev
// table of eps when ref's Service uses Maglev; a list longer than a map can
// index is cut, with a Problem.
func (c *compiler) list(ref portRef, m string, eps []endpoint) endpointList {
	if ref.maglev {
		return endpointList{m: listMap(m), eps: maglevTable(eps, c.opts.maglev().TableSize), hash: true}
	}
	if len(eps) > maxListLen {
		c.problem(ref.svc, fmt.Sprintf("spec.ports[%d]", ref.index),
			fmt.Sprintf("%d endpoints: only the first %d are used", len(eps), maxListLen))
		eps = eps[:maxListLen]
	}
	return endpointList{m: listMap(m), eps: eps}
}

// affinityPort gives ref's port, which has session affinity, chains of
// its own: they remember each client's endpoint (affinity.go).
func (c *compiler) affinityPort(b *builder, ref portRef, sets endpointSets, clusterIPs []netip.Addr, external []externalIP) {
	pc := c.policyChains(b, ref, sets)
	for _, ip := range clusterIPs {
		c.target(b, ref, "spec.clusterIPs", ip, pc.internal)
	}
	if len(external) == 0 && ref.port.NodePort == 0 {
		return
	}
	b.chains = append(b.chains, &nft.Chain{Name: ref.externalChain(), Rules: c.externalRules(b.family, ref, pc)})
	for _, e := range external {
		c.element(b, ref, nft.MapServiceIPs, e.field, ref.key(e.ip), nft.GotoChain(ref.externalChain()))
	}
	if ref.port.NodePort != 0 {
		c.element(b, ref, nft.MapServiceNodePorts, fmt.Sprintf("spec.ports[%d].nodePort", ref.index),
			ref.nodePortKey(), nft.GotoChain(ref.externalChain()))
	}
}

// target sends traffic for a ClusterIP to chain, or drops it when the
// Service has endpoints but none for this traffic (internalTrafficPolicy:
// Local without a local endpoint): dropped, not rejected, as kube-proxy does.
func (c *compiler) target(b *builder, ref portRef, field string, ip netip.Addr, chain string) {
	if chain == "" {
		c.element(b, ref, nft.MapNoEndpointServices, field, ref.key(ip), nft.GotoChain(nft.ChainNoLocal))
		return
	}
	c.element(b, ref, nft.MapServiceIPs, field, ref.key(ip), nft.GotoChain(chain))
}

// noEndpoints makes every address of a port without endpoints reject new
// connections, so that clients fail at once rather than time out.
func (c *compiler) noEndpoints(b *builder, ref portRef, clusterIPs []netip.Addr, external []externalIP) {
	reject := nft.GotoChain(nft.ChainReject)
	for _, ip := range clusterIPs {
		c.element(b, ref, nft.MapNoEndpointServices, "spec.clusterIPs", ref.key(ip), reject)
	}
	for _, e := range external {
		c.element(b, ref, nft.MapNoEndpointServices, e.field, ref.key(e.ip), reject)
	}
	if ref.port.NodePort != 0 {
		c.element(b, ref, nft.MapNoEndpointNodePorts, fmt.Sprintf("spec.ports[%d].nodePort", ref.index),
			ref.nodePortKey(), reject)
	}
}

// element claims a map element for ref's Service. A key that another
// Service claims as well (two Services claiming one IP and port) goes to the
// first Service in the snapshot; the others get a Problem naming field
// (settled when the table is assembled, see claims).
func (c *compiler) element(b *builder, ref portRef, set, field string, key []nft.Value, v nft.Verdict) {
	i := b.claimElement(set, c.key, field, nft.Element{Key: key, Verdict: v, Comment: ref.comment()})
	c.problems = append(c.problems, unitProblem{
		Problem: Problem{Object: ref.object, Field: field}, family: b.family, claim: i})
}

type externalIP struct {
	ip    netip.Addr
	field string
}

// externalIPs are the addresses of svc, other than its ClusterIPs, that
// receive traffic from outside the cluster.
func externalIPs(svc *model.Service, f nft.Family) []externalIP {
	var out []externalIP
	for i, ip := range svc.ExternalIPs {
		if nft.FamilyOf(ip) == f {
			out = append(out, externalIP{ip, fmt.Sprintf("spec.externalIPs[%d]", i)})
		}
	}
	for i, ip := range svc.LoadBalancerIPs {
		if nft.FamilyOf(ip) == f {
			out = append(out, externalIP{ip, fmt.Sprintf("status.loadBalancer.ingress[%d].ip", i)})
		}
	}
	return out
}

func addrsOf(ips []netip.Addr, f nft.Family) []netip.Addr {
	var out []netip.Addr
	for _, ip := range ips {
		if nft.FamilyOf(ip) == f {
			out = append(out, ip)
		}
	}
	return out
}
