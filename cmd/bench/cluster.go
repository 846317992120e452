package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// size is one synthetic cluster: Services x endpoints per Service.
type size struct{ services, endpoints int }

func (s size) String() string { return fmt.Sprintf("%dx%d", s.services, s.endpoints) }

// parseSizes reads "1000x10,10000x10".
func parseSizes(text string) ([]size, error) {
	var out []size
	for _, part := range strings.Split(text, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), "x")
		svcs, err1 := strconv.Atoi(a)
		eps, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || svcs < 1 || eps < 1 {
			return nil, fmt.Errorf("size %q: want SERVICESxENDPOINTS, e.g. 10000x10", part)
		}
		out = append(out, size{svcs, eps})
	}
	return out, nil
}

// The synthetic cluster's address plan. Endpoint addresses are consecutive
// from endpointBase, so a backend namespace can answer for all of them with
// one local route.
var (
	clusterIPBase = netip.MustParseAddr("10.96.0.0")  // 10.96.0.0/12
	endpointBase  = netip.MustParseAddr("10.128.0.0") // 10.128.0.0/10
	lbIPBase      = netip.MustParseAddr("192.0.2.0")  // LoadBalancer ingress IPs, one per 20 Services
	benchNode     = "node-1"
)

// Node ports: the default range, 30000-32767. Once it is used up, further
// Services that would be NodePort or LoadBalancer stay ClusterIP, as an API
// server would refuse them.
const (
	nodePortFirst = 30000
	nodePortLast  = 32767
)

// maxSliceEndpoints is the EndpointSlice controller's default slice size.
const maxSliceEndpoints = 100

// generator hands out NodePorts while it builds Services.
type generator struct {
	nextNodePort int
}

// generate builds a cluster of s.services Services with s.endpoints ready
// endpoints each. The mix, by Service index i (deterministic):
//   - ports: 80% one TCP port, 15% two (http, https), 5% three (dns/udp,
//     dns-tcp, metrics);
//   - type: every 20th is LoadBalancer (one ingress IP), every 4th (+1) is
//     NodePort, the rest ClusterIP; NodePorts until the range is used up;
//   - every 50th has ClientIP session affinity (10800 s); every other
//     LoadBalancer has externalTrafficPolicy: Local;
//   - endpoints spread over 10 nodes, this node being node-1.
func generate(s size) *model.Snapshot {
	g := &generator{nextNodePort: nodePortFirst}
	snap := &model.Snapshot{
		Services: make([]model.Service, 0, s.services),
		Slices:   make([]model.EndpointSlice, 0, s.services),
	}
	for i := range s.services {
		svc := g.service(i)
		snap.Services = append(snap.Services, svc)
		snap.Slices = append(snap.Slices, slicesFor(&svc, i*s.endpoints, s.endpoints)...)
	}
	return snap
}

func serviceName(i int) string { return "svc-" + strconv.Itoa(i) }

// benchNamespace spreads Services over 100 namespaces, as real clusters do.
func benchNamespace(i int) string { return "ns-" + strconv.Itoa(i%100) }

func (g *generator) service(i int) model.Service {
	svc := model.Service{
		Namespace:  benchNamespace(i),
		Name:       serviceName(i),
		Type:       model.ClusterIP,
		ClusterIPs: []netip.Addr{offset(clusterIPBase, i+1)},
		Ports:      portsFor(i),
	}
	switch {
	case i%20 == 0:
		svc.Type = model.LoadBalancer
		svc.LoadBalancerIPs = []netip.Addr{offset(lbIPBase, i/20)}
		svc.ExternalLocal = i%40 == 0
	case i%4 == 1:
		svc.Type = model.NodePort
	}
	if svc.Type != model.ClusterIP && !g.allocate(&svc) {
		svc.Type, svc.LoadBalancerIPs, svc.ExternalLocal = model.ClusterIP, nil, false
	}
	if svc.ExternalLocal {
		svc.HealthCheckNodePort = 10256 // out of the NodePort range: never clashes
	}
	if i%50 == 7 {
		svc.AffinitySeconds = 10800
	}
	return svc
}

// allocate gives every port of svc a NodePort, or reports false when the
// range is used up.
func (g *generator) allocate(svc *model.Service) bool {
	if g.nextNodePort+len(svc.Ports)-1 > nodePortLast {
		return false
	}
	for j := range svc.Ports {
		svc.Ports[j].NodePort = uint16(g.nextNodePort)
		g.nextNodePort++
	}
	return true
}

func portsFor(i int) []model.ServicePort {
	http := model.ServicePort{Name: "http", Protocol: model.TCP, Port: 80}
	switch i % 20 {
	case 3, 8, 13:
		return []model.ServicePort{http, {Name: "https", Protocol: model.TCP, Port: 443}}
	case 18:
		return []model.ServicePort{
			{Name: "dns", Protocol: model.UDP, Port: 53},
			{Name: "dns-tcp", Protocol: model.TCP, Port: 53},
			{Name: "metrics", Protocol: model.TCP, Port: 9153},
		}
	}
	return []model.ServicePort{http}
}

// targetPort is the container port behind a Service port.
func targetPort(p model.ServicePort) uint16 {
	if p.Port == 53 {
		return 53
	}
	return 8000 + p.Port
}

// slicesFor returns the EndpointSlices of svc: n endpoints with consecutive
// addresses from endpointBase+first, in slices of at most 100.
func slicesFor(svc *model.Service, first, n int) []model.EndpointSlice {
	ports := make([]model.EndpointPort, len(svc.Ports))
	for j, p := range svc.Ports {
		ports[j] = model.EndpointPort{Name: p.Name, Protocol: p.Protocol, Port: targetPort(p)}
	}
	var out []model.EndpointSlice
	for start := 0; start < n; start += maxSliceEndpoints {
		end := min(start+maxSliceEndpoints, n)
		eps := make([]model.Endpoint, 0, end-start)
		for j := start; j < end; j++ {
			eps = append(eps, model.Endpoint{
				Addresses: []netip.Addr{offset(endpointBase, first+j)},
				Ready:     true, Serving: true,
				NodeName: "node-" + strconv.Itoa((first+j)%10+1),
			})
		}
		out = append(out, model.EndpointSlice{
			Namespace: svc.Namespace, Name: fmt.Sprintf("%s-%d", svc.Name, start/maxSliceEndpoints),
			Service: svc.Name, AddressType: model.IPv4, Ports: ports, Endpoints: eps,
		})
	}
	return out
}

// offset returns base + n as an IPv4 address.
func offset(base netip.Addr, n int) netip.Addr {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// movedEndpoint is outside every generated endpoint range (10.128.0.0/10
// holds 4M addresses, clusters use at most a few hundred thousand), and still
// inside the range a backend namespace answers for.
func movedEndpoint(n int) netip.Addr { return offset(endpointBase, 1<<21+n) }

// changeEndpoints returns a copy of snap where the first endpoint of each
// Service index in which moved to a new address, and the keys of the
// Services changed. snap itself is not modified: callers may still hold it.
func changeEndpoints(snap *model.Snapshot, which []int, gen int) (*model.Snapshot, map[string]bool) {
	out := &model.Snapshot{Services: snap.Services, Slices: append([]model.EndpointSlice(nil), snap.Slices...)}
	changed := map[string]bool{}
	bySvc := sliceIndex(out)
	for _, i := range which {
		svc := &snap.Services[i]
		idx, ok := bySvc[svc.Key()]
		if !ok {
			continue
		}
		s := out.Slices[idx]
		s.Endpoints = append([]model.Endpoint(nil), s.Endpoints...)
		s.Endpoints[0].Addresses = []netip.Addr{movedEndpoint(gen*len(which) + len(changed))}
		out.Slices[idx] = s
		changed[svc.Key()] = true
	}
	return out, changed
}

// sliceIndex maps "namespace/service" to the index of its first slice.
func sliceIndex(snap *model.Snapshot) map[string]int {
	idx := make(map[string]int, len(snap.Services))
	for i := range snap.Slices {
		key := snap.Slices[i].Namespace + "/" + snap.Slices[i].Service
		if _, ok := idx[key]; !ok {
			idx[key] = i
		}
	}
	return idx
}

// spread returns n Service indexes evenly spread over [0, total).
func spread(n, total int) []int {
	out := make([]int, 0, n)
	for k := range n {
		out = append(out, (k*total+total/2)/n)
	}
	return out
}

func benchNodeModel(ips ...netip.Addr) model.Node {
	return model.Node{Name: benchNode, IPs: ips}
}
