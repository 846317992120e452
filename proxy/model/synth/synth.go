// Package synth builds synthetic clusters: model snapshots of any size from
// one address plan, for the benchmarks (cmd/bench), the manifest writer
// (cmd/gencluster) and the tests. Service i is always the same Service, so
// that runs, tools and tests compare. Random makes random changes to a
// snapshot, for the tests that compare an incremental path with a fresh one.
package synth

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// The address plan. Endpoint addresses are consecutive from EndpointBase,
// so that a backend namespace can answer for all of them with one local
// route.
var (
	ClusterIPBase    = netip.MustParseAddr("10.96.0.0")  // 10.96.0.0/12: Service i has ClusterIPBase + i
	EndpointBase     = netip.MustParseAddr("10.128.0.0") // 10.128.0.0/10
	LoadBalancerBase = netip.MustParseAddr("192.0.2.0")  // one ingress IP per 20 Services, in the mix
)

// NodeName is the node the clusters are built for; the mix spreads
// endpoints over it and nine others.
const NodeName = "node-1"

// Node ports: the default range, 30000-32767. Once it is used up, further
// Services that would be NodePort or LoadBalancer stay ClusterIP, as an API
// server would refuse them.
const (
	NodePortFirst = 30000
	NodePortLast  = 32767
)

// maxSliceEndpoints is the EndpointSlice controller's default slice size.
const maxSliceEndpoints = 100

// affinitySeconds is kube-proxy's default ClientIP affinity timeout.
const affinitySeconds = 10800

// Spec is the size and the shape of a synthetic cluster.
type Spec struct {
	Services  int
	Endpoints int // ready endpoints per Service
	// Mixed gives the Services the benchmark's mix (docs/benchmarks.md), by
	// Service index i:
	//   - ports: 80% one TCP port, 15% two (http, https), 5% three
	//     (dns/udp, dns-tcp, metrics);
	//   - type: every 20th is LoadBalancer (one ingress IP), every other of
	//     those with externalTrafficPolicy: Local; every 4th (+1) is
	//     NodePort; the rest ClusterIP;
	//   - every 50th (+7) has ClientIP session affinity;
	//   - Services spread over 100 namespaces, endpoints over 10 nodes.
	// Without it every Service is a NodePort Service with one TCP port
	// (http, 80 -> 8080) in namespace "ns", and its endpoints name no node:
	// the smallest Service with every kind of element, for tests.
	Mixed bool
	// AffinityEvery and LocalEvery, when not 0, give every Nth Service
	// (i%N == 0) ClientIP session affinity, and externalTrafficPolicy:
	// Local (as a NodePort Service when it would be ClusterIP).
	AffinityEvery, LocalEvery int
	// MaglevEvery, when not 0, gives every Nth Service (i%N == 3, so that
	// none of them has the mix's affinity) the annotation that asks for
	// Maglev consistent hashing.
	MaglevEvery int
}

// Cluster builds the cluster s describes. Service i's EndpointSlices
// follow it in Slices, endpoints with consecutive addresses from
// Endpoint(i*s.Endpoints), at most 100 to a slice.
func Cluster(s Spec) *model.Snapshot {
	g := &generator{spec: s, nextNodePort: NodePortFirst}
	snap := &model.Snapshot{
		Services: make([]model.Service, 0, s.Services),
		Slices:   make([]model.EndpointSlice, 0, s.Services),
	}
	for i := range s.Services {
		svc := g.service(i)
		snap.Services = append(snap.Services, svc)
		snap.Slices = append(snap.Slices, Slices(&svc, i*s.Endpoints, s.Endpoints, s.Mixed)...)
	}
	return snap
}

// Plain is the plain cluster of n Services with eps endpoints each (see
// Spec): Service i is svc-i in namespace ns, a NodePort Service with
// ClusterIP 10.96.0.0 + i and NodePort 30000 + i, and (eps <= 100) its
// EndpointSlice is Slices[i].
func Plain(n, eps int) *model.Snapshot { return Cluster(Spec{Services: n, Endpoints: eps}) }

// generator hands out NodePorts while it builds Services.
type generator struct {
	spec         Spec
	nextNodePort int
}

func (g *generator) service(i int) model.Service {
	svc := model.Service{Namespace: "ns", Name: "svc-" + strconv.Itoa(i), Type: model.NodePort,
		ClusterIPs: []netip.Addr{ClusterIP(i)}, Ports: []model.ServicePort{httpPort}}
	if g.spec.Mixed {
		g.mix(&svc, i)
	}
	if every(g.spec.LocalEvery, i) {
		if svc.Type == model.ClusterIP {
			svc.Type = model.NodePort
		}
		svc.ExternalLocal = true
	}
	if svc.Type != model.ClusterIP && !g.allocate(&svc) {
		svc.Type, svc.LoadBalancerIPs, svc.ExternalLocal = model.ClusterIP, nil, false
	}
	if svc.ExternalLocal {
		svc.HealthCheckNodePort = 10256 // out of the NodePort range: never clashes
	}
	if every(g.spec.AffinityEvery, i) {
		svc.AffinitySeconds = affinitySeconds
	}
	if g.spec.MaglevEvery > 0 && i%g.spec.MaglevEvery == 3%g.spec.MaglevEvery {
		svc.LoadBalancing = "maglev"
	}
	return svc
}

// mix gives Service i the benchmark's namespace, ports, type and affinity.
func (g *generator) mix(svc *model.Service, i int) {
	svc.Namespace = "ns-" + strconv.Itoa(i%100)
	svc.Ports = portsFor(i)
	switch {
	case i%20 == 0:
		svc.Type = model.LoadBalancer
		svc.LoadBalancerIPs = []netip.Addr{offset(LoadBalancerBase, i/20)}
		svc.ExternalLocal = i%40 == 0
	case i%4 == 1:
		svc.Type = model.NodePort
	default:
		svc.Type = model.ClusterIP
	}
	if i%50 == 7 {
		svc.AffinitySeconds = affinitySeconds
	}
}

func every(n, i int) bool { return n > 0 && i%n == 0 }

// allocate gives every port of svc a NodePort, or reports false when the
// range is used up.
func (g *generator) allocate(svc *model.Service) bool {
	if g.nextNodePort+len(svc.Ports)-1 > NodePortLast {
		return false
	}
	for j := range svc.Ports {
		svc.Ports[j].NodePort = uint16(g.nextNodePort)
		g.nextNodePort++
	}
	return true
}

var httpPort = model.ServicePort{Name: "http", Protocol: model.TCP, Port: 80}

func portsFor(i int) []model.ServicePort {
	switch i % 20 {
	case 3, 8, 13:
		return []model.ServicePort{httpPort, {Name: "https", Protocol: model.TCP, Port: 443}}
	case 18:
		return []model.ServicePort{
			{Name: "dns", Protocol: model.UDP, Port: 53},
			{Name: "dns-tcp", Protocol: model.TCP, Port: 53},
			{Name: "metrics", Protocol: model.TCP, Port: 9153},
		}
	}
	return []model.ServicePort{httpPort}
}

// TargetPort is the container port behind a Service port: 8000 + port
// (http 80 -> 8080), DNS on 53.
func TargetPort(p model.ServicePort) uint16 {
	if p.Port == 53 {
		return 53
	}
	return 8000 + p.Port
}

// Slices returns the EndpointSlices of svc: n ready endpoints with
// consecutive addresses from Endpoint(first), in slices of at most 100.
// With nodes, endpoint first+j is on node-((first+j)%10+1), so NodeName
// has every tenth; without, no endpoint names its node.
func Slices(svc *model.Service, first, n int, nodes bool) []model.EndpointSlice {
	ports := make([]model.EndpointPort, len(svc.Ports))
	for j, p := range svc.Ports {
		ports[j] = model.EndpointPort{Name: p.Name, Protocol: p.Protocol, Port: TargetPort(p)}
	}
	var out []model.EndpointSlice
	for start := 0; start < n; start += maxSliceEndpoints {
		end := min(start+maxSliceEndpoints, n)
		eps := make([]model.Endpoint, 0, end-start)
		for j := start; j < end; j++ {
			ep := model.Endpoint{Addresses: []netip.Addr{Endpoint(first + j)}, Ready: true, Serving: true}
			if nodes {
				ep.NodeName = "node-" + strconv.Itoa((first+j)%10+1)
			}
			eps = append(eps, ep)
		}
		out = append(out, model.EndpointSlice{
			Namespace: svc.Namespace, Name: fmt.Sprintf("%s-%d", svc.Name, start/maxSliceEndpoints),
			Service: svc.Name, AddressType: model.IPv4, Ports: ports, Endpoints: eps,
		})
	}
	return out
}

// ClusterIP is Service i's ClusterIP.
func ClusterIP(i int) netip.Addr { return offset(ClusterIPBase, i) }

// Endpoint is the address of the n-th endpoint of the cluster.
func Endpoint(n int) netip.Addr { return offset(EndpointBase, n) }

// MovedEndpoint is an address that no generated endpoint has (10.128.0.0/10
// holds 4M addresses, clusters use at most a few hundred thousand) but
// still in the range a backend namespace answers for: where an endpoint
// moves to in a timed change.
func MovedEndpoint(n int) netip.Addr { return offset(EndpointBase, 1<<21+n) }

// offset returns base + n as an IPv4 address.
func offset(base netip.Addr, n int) netip.Addr {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
