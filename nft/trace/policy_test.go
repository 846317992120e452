package trace_test

import (
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
	"github.com/nftproxy/nftproxy/proxy/model"
)

var (
	localEP  = addr("10.0.1.1") // on node-a
	remoteEP = addr("10.0.2.1") // on another node
)

// policySnapshot is lbSnapshot with endpoints placed on nodes: the first of
// local on node-a, the others elsewhere.
func policySnapshot(local, remote []netip.Addr, edit func(*model.Service)) *model.Snapshot {
	snap := lbSnapshot(nil)
	edit(&snap.Services[0])
	s := &snap.Slices[0]
	s.Endpoints = nil
	for _, a := range local {
		s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true, NodeName: node.Name})
	}
	for _, a := range remote {
		s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true, NodeName: "node-b"})
	}
	return snap
}

func dropped(dest netip.Addr, port uint16) map[string]string {
	r := trace.Result{Verdict: trace.Drop, Dest: netip.AddrPortFrom(dest, port)}
	return map[string]string{r.String(): "1"}
}

type policyCase struct {
	name         string
	saddr, daddr netip.Addr
	dport        uint16
	host         bool
	want         map[string]string
}

func runPolicyCases(t *testing.T, table *nft.Table, cases []policyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := fromNetwork
			if tc.host {
				o = fromHost
			}
			checkSummary(t, table, packet(tc.saddr, tc.daddr, nft.ProtoTCP, tc.dport), o, tc.want)
		})
	}
}

// TestExternalLocal: outside traffic reaches only this node's endpoint and
// keeps its source; pods and the node still reach every endpoint.
func TestExternalLocal(t *testing.T) {
	etpLocal := func(s *model.Service) { s.ExternalLocal = true }
	both := []netip.Addr{localEP, remoteEP}
	table := compileTable(t, policySnapshot([]netip.Addr{localEP}, []netip.Addr{remoteEP}, etpLocal), options(), nft.IPv4)
	runPolicyCases(t, table, []policyCase{
		{"LB IP from outside: local endpoint, source kept", remoteIP, lbIP, 80, false, accepted(localEP, 8080, false)},
		{"NodePort from outside: local endpoint, source kept", remoteIP, nodeIP, 30080, false, accepted(localEP, 8080, false)},
		{"externalIP from outside", remoteIP, externalIP, 80, false, accepted(localEP, 8080, false)},
		{"LB IP from a pod: any endpoint", clientIP, lbIP, 80, false, spread(both, 8080, false)},
		{"LB IP from the node: any endpoint, masqueraded", nodeIP, lbIP, 80, true, spread(both, 8080, true)},
		{"ClusterIP is not external", clientIP, webIP, 80, false, spread(both, 8080, false)},
	})
	none := compileTable(t, policySnapshot(nil, []netip.Addr{remoteEP}, etpLocal), options(), nft.IPv4)
	runPolicyCases(t, none, []policyCase{
		{"no local endpoint: LB IP from outside dropped", remoteIP, lbIP, 80, false, dropped(lbIP, 80)},
		{"no local endpoint: NodePort from outside dropped", remoteIP, nodeIP, 30080, false, dropped(nodeIP, 30080)},
		{"no local endpoint: a pod still gets one", clientIP, lbIP, 80, false, accepted(remoteEP, 8080, false)},
		{"no local endpoint: the node still gets one", nodeIP, nodeIP, 30080, true, accepted(remoteEP, 8080, true)},
	})
}

// TestInternalLocal: ClusterIP traffic goes to this node's endpoints only;
// without one it is dropped, while external traffic (policy Cluster) still
// reaches every endpoint.
func TestInternalLocal(t *testing.T) {
	itpLocal := func(s *model.Service) { s.InternalLocal = true }
	table := compileTable(t, policySnapshot([]netip.Addr{localEP}, []netip.Addr{remoteEP}, itpLocal), options(), nft.IPv4)
	runPolicyCases(t, table, []policyCase{
		{"ClusterIP from a pod: local endpoint", clientIP, webIP, 80, false, accepted(localEP, 8080, false)},
		{"LB IP stays cluster-wide", remoteIP, lbIP, 80, false, spread([]netip.Addr{localEP, remoteEP}, 8080, true)},
	})
	none := compileTable(t, policySnapshot(nil, []netip.Addr{remoteEP}, itpLocal), options(), nft.IPv4)
	runPolicyCases(t, none, []policyCase{
		{"no local endpoint: ClusterIP dropped", clientIP, webIP, 80, false, dropped(webIP, 80)},
		{"no local endpoint: LB IP still served", remoteIP, lbIP, 80, false, accepted(remoteEP, 8080, true)},
	})
}

// TestSourceRanges: only allowed sources reach the load-balancer IP, before
// any DNAT; other addresses of the Service are not restricted.
func TestSourceRanges(t *testing.T) {
	ranges := func(s *model.Service) {
		s.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("203.0.113.0/28"), netip.MustParsePrefix("192.168.0.0/24")}
	}
	table := compileTable(t, policySnapshot([]netip.Addr{localEP}, nil, ranges), options(), nft.IPv4)
	runPolicyCases(t, table, []policyCase{
		{"allowed source", remoteIP, lbIP, 80, false, accepted(localEP, 8080, true)},
		{"other source dropped", addr("203.0.113.99"), lbIP, 80, false, dropped(lbIP, 80)},
		{"a pod is no exception", clientIP, lbIP, 80, false, dropped(lbIP, 80)},
		{"the node's range lets the LB IP itself in", lbIP, lbIP, 80, false, accepted(localEP, 8080, true)},
		{"the externalIP is not restricted", addr("203.0.113.99"), externalIP, 80, false, accepted(localEP, 8080, true)},
		{"another port of the LB IP is not restricted", addr("203.0.113.99"), lbIP, 81, false, accepted(lbIP, 81, false)},
	})
}

// TestAffinity: a client the affinity set remembers goes back to its
// endpoint; others are spread evenly (and recorded, which a trace of one
// packet does not show).
func TestAffinity(t *testing.T) {
	eps := []netip.Addr{localEP, remoteEP, addr("10.0.3.1")}
	table := compileTable(t, policySnapshot(eps, nil, func(s *model.Service) { s.AffinitySeconds = 60 }), options(), nft.IPv4)
	trace.Remember(table, clientIP, netip.AddrPortFrom(remoteEP, 8080))
	runPolicyCases(t, table, []policyCase{
		{"remembered client", clientIP, webIP, 80, false, accepted(remoteEP, 8080, false)},
		{"new client", addr("10.0.9.10"), webIP, 80, false, spread(eps, 8080, false)},
		{"remembered client through the load-balancer IP: same memory", clientIP, lbIP, 80, false, accepted(remoteEP, 8080, true)},
		{"remembered client through the NodePort: same memory", clientIP, nodeIP, 30080, false, accepted(remoteEP, 8080, true)},
	})
}

// TestHairpinLocalOnly: only endpoints on this node (or naming no node)
// get a hairpin element, since a pod's traffic to its own Service is
// DNATed on the pod's node: an endpoint on another node reaching itself
// was DNATed there, not here.
func TestHairpinLocalOnly(t *testing.T) {
	unknown := addr("10.0.3.1")
	snap := policySnapshot([]netip.Addr{localEP}, []netip.Addr{remoteEP}, func(*model.Service) {})
	s := &snap.Slices[0]
	s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{unknown}, Ready: true, Serving: true})
	table := compileTable(t, snap, options(), nft.IPv4)
	self := func(ep netip.Addr, masq bool) map[string]string {
		want := spread([]netip.Addr{localEP, remoteEP, unknown}, 8080, false)
		r := trace.Result{Verdict: trace.Accept, Dest: netip.AddrPortFrom(ep, 8080)}
		delete(want, r.String())
		r.Masqueraded = masq
		want[r.String()] = "1/3"
		return want
	}
	runPolicyCases(t, table, []policyCase{
		{"local endpoint reaching itself is masqueraded", localEP, webIP, 80, false, self(localEP, true)},
		{"endpoint naming no node: masqueraded too", unknown, webIP, 80, false, self(unknown, true)},
		{"endpoint on another node has no hairpin element", remoteEP, webIP, 80, false, self(remoteEP, false)},
	})
}

// TestAffinityLargeService: a Service split into bucket chains still
// spreads new clients evenly, and sends a remembered one back.
func TestAffinityLargeService(t *testing.T) {
	var eps []netip.Addr
	for i := range 40 {
		eps = append(eps, netip.AddrFrom4([4]byte{10, 0, 4, byte(i + 1)}))
	}
	table := compileTable(t, policySnapshot(eps, nil, func(s *model.Service) { s.AffinitySeconds = 60 }), options(), nft.IPv4)
	trace.Remember(table, clientIP, netip.AddrPortFrom(eps[33], 8080))
	runPolicyCases(t, table, []policyCase{
		{"new client", addr("10.0.9.10"), webIP, 80, false, spread(eps, 8080, false)},
		{"remembered client", clientIP, webIP, 80, false, accepted(eps[33], 8080, false)},
	})
}

// TestAffinityRemovedEndpoint: the kernel keeps affinity elements across
// syncs (they belong to the packet path), so a client remembered with an
// endpoint that a sync removed still has its element; the table compiled
// without the endpoint must never send it there, small or bucketed.
func TestAffinityRemovedEndpoint(t *testing.T) {
	large := make([]netip.Addr, 40)
	for i := range large {
		large[i] = netip.AddrFrom4([4]byte{10, 0, 4, byte(i + 1)})
	}
	for _, tc := range []struct {
		name string
		eps  []netip.Addr
		gone int
	}{
		{"three endpoints", []netip.Addr{localEP, remoteEP, addr("10.0.3.1")}, 1},
		{"bucketed", large, 33},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withAffinity := func(s *model.Service) { s.AffinitySeconds = 60 }
			before := compileTable(t, policySnapshot(tc.eps, nil, withAffinity), options(), nft.IPv4)
			trace.Remember(before, clientIP, netip.AddrPortFrom(tc.eps[tc.gone], 8080))
			runPolicyCases(t, before, []policyCase{
				{"remembered before the removal", clientIP, webIP, 80, false, accepted(tc.eps[tc.gone], 8080, false)},
			})
			left := append(append([]netip.Addr{}, tc.eps[:tc.gone]...), tc.eps[tc.gone+1:]...)
			after := compileTable(t, policySnapshot(left, nil, withAffinity), options(), nft.IPv4)
			after.Set("affinity").Elements = before.Set("affinity").Elements
			runPolicyCases(t, after, []policyCase{
				{"removed endpoint never chosen", clientIP, webIP, 80, false, spread(left, 8080, false)},
			})
		})
	}
}
