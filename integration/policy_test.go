//go:build integration

package integration

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/conntrack"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// placed returns the EndpointSlice of Service svc with one ready endpoint
// per backend, each on the node nodes[i] names.
func placed(svc string, pt port, bs []*lab.Backend, nodes []string) model.EndpointSlice {
	s := model.EndpointSlice{Namespace: namespace, Name: svc + "-1", Service: svc, AddressType: model.IPv4,
		Ports: []model.EndpointPort{{Name: pt.name, Protocol: pt.proto, Port: pt.target}}}
	for i, b := range bs {
		s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{b.IPv4}, Ready: true, Serving: true, NodeName: nodes[i]})
	}
	return s
}

// assertNoReply sends a request that must get no answer at all: dropped,
// neither served nor refused.
func assertNoReply(t *testing.T, ns *lab.NS, p lab.Proto, src, addr string) {
	t.Helper()
	reply, err := ns.RequestFrom(p, src, addr, timeout)
	if err == nil || lab.IsRefused(err) {
		t.Fatalf("got %q, %v; want no reply (dropped)", reply, err)
	}
}

// TestExternalTrafficPolicyLocal: traffic from outside to the
// load-balancer IP and NodePort reaches only this node's endpoint and keeps
// the client's address; a pod still reaches the other node's endpoint; with
// no endpoint on this node, outside traffic is dropped.
func TestExternalTrafficPolicyLocal(t *testing.T) {
	c := lab.NewCluster(t, 2)
	p := newProxy(t, c)
	local, remote := c.Backends[0], c.Backends[1]
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30080}
	svc := service("web", addrs("10.96.0.90"), pt)
	svc.Type, svc.LoadBalancerIPs, svc.ExternalLocal = model.LoadBalancer, addrs("203.0.113.90"), true
	for _, b := range c.Backends {
		serve(t, pt, b, b.IPv4)
	}
	lb, nodePort := lab.AddrPort(svc.LoadBalancerIPs[0], 80), lab.AddrPort(c.NodeIPv4, 30080)
	p.sync(t, model.Snapshot{Services: []model.Service{svc},
		Slices: []model.EndpointSlice{placed("web", pt, c.Backends, []string{"node-1", "node-2"})}})
	for _, addr := range []string{lb, nodePort} {
		for i := range 10 {
			got := ask(t, c.Client, lab.TCP, "", addr)
			if want := (lab.Reply{Name: local.Name, Source: c.ClientIPv4}); got != want {
				t.Fatalf("%s request %d: got %+v, want %+v (local endpoint, client address kept)", addr, i, got, want)
			}
		}
	}
	p.sync(t, model.Snapshot{Services: []model.Service{svc},
		Slices: []model.EndpointSlice{placed("web", pt, []*lab.Backend{remote}, []string{"node-2"})}})
	t.Run("no local endpoint: outside traffic dropped", func(t *testing.T) {
		assertNoReply(t, c.Client, lab.TCP, "", lb)
		assertNoReply(t, c.Client, lab.TCP, "", nodePort)
	})
	t.Run("no local endpoint: a pod still reaches the Service", func(t *testing.T) {
		got := ask(t, local.NS, lab.TCP, local.IPv4.String(), lb)
		if want := (lab.Reply{Name: remote.Name, Source: local.IPv4}); got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
}

// TestInternalTrafficPolicyLocal: ClusterIP traffic goes only to this
// node's endpoint; without one it is dropped.
func TestInternalTrafficPolicyLocal(t *testing.T) {
	c := lab.NewCluster(t, 2)
	p := newProxy(t, c)
	pt := port{name: "dns", proto: model.UDP, port: 53, target: 5353}
	svc := service("dns", addrs("10.96.0.91"), pt)
	svc.InternalLocal = true
	for _, b := range c.Backends {
		serve(t, pt, b, b.IPv4)
	}
	client := c.Backends[1]
	addr := lab.AddrPort(svc.ClusterIPs[0], 53)
	p.sync(t, model.Snapshot{Services: []model.Service{svc},
		Slices: []model.EndpointSlice{placed("dns", pt, c.Backends, []string{"node-1", "node-2"})}})
	for i := range 10 {
		if got := ask(t, client.NS, lab.UDP, "", addr); got.Name != c.Backends[0].Name {
			t.Fatalf("request %d answered by %s, want the local endpoint %s", i, got.Name, c.Backends[0].Name)
		}
	}
	p.sync(t, model.Snapshot{Services: []model.Service{svc},
		Slices: []model.EndpointSlice{placed("dns", pt, c.Backends[1:], []string{"node-2"})}})
	assertNoReply(t, client.NS, lab.UDP, "", addr)
}

// TestSourceRanges: only sources in loadBalancerSourceRanges reach the
// load-balancer IP.
func TestSourceRanges(t *testing.T) {
	c := lab.NewCluster(t, 1)
	p := newProxy(t, c)
	b := c.Backends[0]
	pt := port{name: "https", proto: model.TCP, port: 443, target: 8443, nodePort: 30443}
	svc := service("api", addrs("10.96.0.92"), pt)
	svc.Type, svc.LoadBalancerIPs = model.LoadBalancer, addrs("203.0.113.92")
	serve(t, pt, b, b.IPv4)
	lb := lab.AddrPort(svc.LoadBalancerIPs[0], 443)
	for _, tc := range []struct {
		name    string
		ranges  string
		allowed bool
	}{
		{"client inside the range", c.ClientIPv4.String() + "/32", true},
		{"client outside the range", "192.0.2.0/24", false},
		{"range holding the client among others", "192.0.2.0/24," + netip.PrefixFrom(c.ClientIPv4, 24).Masked().String(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc.LoadBalancerSourceRanges = nil
			for _, r := range strings.Split(tc.ranges, ",") {
				svc.LoadBalancerSourceRanges = append(svc.LoadBalancerSourceRanges, netip.MustParsePrefix(r))
			}
			p.sync(t, snapshot(svc, []port{pt}, b.IPv4))
			if !tc.allowed {
				assertNoReply(t, c.Client, lab.TCP, "", lb)
				return
			}
			if got := ask(t, c.Client, lab.TCP, "", lb); got.Name != b.Name {
				t.Errorf("answered by %s, want %s", got.Name, b.Name)
			}
		})
	}
}

// TestSessionAffinity: every new connection of a client goes to the same
// endpoint. The sync that removes that endpoint is one transaction and
// nothing runs after it, yet the very next connection goes elsewhere,
// although the kernel still remembers the client with the removed endpoint
// (the element stays until it times out); then the client sticks to its
// new endpoint. IPv4 and IPv6 (whose 56-byte keys fill the registers).
func TestSessionAffinity(t *testing.T) {
	for _, tc := range []struct {
		family    nft.Family
		clusterIP string
		addr      func(*lab.Backend) netip.Addr
	}{
		{nft.IPv4, "10.96.0.93", func(b *lab.Backend) netip.Addr { return b.IPv4 }},
		{nft.IPv6, "fd00:96::93", func(b *lab.Backend) netip.Addr { return b.IPv6 }},
	} {
		t.Run(string(tc.family), func(t *testing.T) {
			c := lab.NewCluster(t, 3)
			p := newProxy(t, c)
			pt := port{name: "http", proto: model.TCP, port: 80, target: 8080}
			svc := service("sticky", addrs(tc.clusterIP), pt)
			svc.AffinitySeconds = 600
			eps := map[string]netip.Addr{}
			for _, b := range c.Backends {
				serve(t, pt, b, tc.addr(b))
				eps[b.Name] = tc.addr(b)
			}
			addr := lab.AddrPort(svc.ClusterIPs[0], 80)
			p.sync(t, snapshot(svc, []port{pt}, slices.Collect(maps.Values(eps))...))
			first := sameBackend(t, c.Client, addr, 20)
			remembered := affinityElements(nftIn(t, c.Node, "list", "set", string(tc.family), nft.TableName, "affinity"))
			delete(eps, first)
			before := generation(t, p)
			p.sync(t, snapshot(svc, []port{pt}, slices.Collect(maps.Values(eps))...))
			if after := generation(t, p); after != before+1 {
				t.Fatalf("the removal took generations %d to %d, want one transaction", before, after)
			}
			if second := sameBackend(t, c.Client, addr, 20); second == first {
				t.Fatalf("the removed endpoint %s still answered", first)
			}
			memory := nftIn(t, c.Node, "list", "set", string(tc.family), nft.TableName, "affinity")
			if len(remembered) != 1 || !slices.Contains(affinityElements(memory), remembered[0]) {
				t.Errorf("the affinity set no longer holds the element %v that sent the client to %s, so this test did not exercise a stale element:\n%s",
					remembered, first, memory)
			}
		})
	}
}

// affinityElements returns the keys ("client . ID") of the elements in a
// listing of the affinity set.
func affinityElements(listing string) []string {
	var out []string
	for _, m := range affinityElement.FindAllStringSubmatch(listing, -1) {
		out = append(out, m[1])
	}
	return out
}

var affinityElement = regexp.MustCompile(`([0-9a-f:.]+ \. [0-9]+) timeout`)

// TestSessionAffinityAcrossEntryPoints: the memory belongs to the Service
// port, not to the address it was reached on. A client sent to an endpoint
// through the load-balancer IP goes to that endpoint through the
// ClusterIP, the NodePort and the externalIP too, in both families.
func TestSessionAffinityAcrossEntryPoints(t *testing.T) {
	for _, tc := range []struct {
		family         nft.Family
		clusterIP      string
		externalIP, lb string
		node           func(*lab.Cluster) netip.Addr
		addr           func(*lab.Backend) netip.Addr
	}{
		{nft.IPv4, "10.96.0.95", "203.0.113.95", "203.0.113.96",
			func(c *lab.Cluster) netip.Addr { return c.NodeIPv4 }, func(b *lab.Backend) netip.Addr { return b.IPv4 }},
		{nft.IPv6, "fd00:96::95", "2001:db8:113::95", "2001:db8:113::96",
			func(c *lab.Cluster) netip.Addr { return c.NodeIPv6 }, func(b *lab.Backend) netip.Addr { return b.IPv6 }},
	} {
		t.Run(string(tc.family), func(t *testing.T) {
			c := lab.NewCluster(t, 3)
			p := newProxy(t, c)
			pt := port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30095}
			svc := service("sticky", addrs(tc.clusterIP), pt)
			svc.Type, svc.ExternalIPs, svc.LoadBalancerIPs = model.LoadBalancer, addrs(tc.externalIP), addrs(tc.lb)
			svc.AffinitySeconds = 600
			var eps []netip.Addr
			for _, b := range c.Backends {
				serve(t, pt, b, tc.addr(b))
				eps = append(eps, tc.addr(b))
			}
			p.sync(t, snapshot(svc, []port{pt}, eps...))
			first := sameBackend(t, c.Client, lab.AddrPort(svc.LoadBalancerIPs[0], 80), 5)
			for _, entry := range []string{lab.AddrPort(svc.ClusterIPs[0], 80), lab.AddrPort(tc.node(c), 30095),
				lab.AddrPort(svc.ExternalIPs[0], 80), lab.AddrPort(svc.LoadBalancerIPs[0], 80)} {
				if got := sameBackend(t, c.Client, entry, 5); got != first {
					t.Errorf("through %s: endpoint %s, want %s, which the client got through the load-balancer IP", entry, got, first)
				}
			}
		})
	}
}

// TestSessionAffinityTimeout: a client is remembered for the Service's
// timeout and no longer. Within it every new connection goes to the same
// endpoint; once the timeout has passed without a connection, the kernel
// lists no element for the client and the next connection is chosen at
// random again, so a later one lands on another endpoint. Upstream's e2e
// "session affinity timeout" tests check this with 125 s on a real node.
func TestSessionAffinityTimeout(t *testing.T) {
	const seconds, rounds = 2, 30
	c := lab.NewCluster(t, 3)
	p := newProxy(t, c)
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080}
	svc := service("sticky-timeout", addrs("10.96.0.94"), pt)
	svc.AffinitySeconds = seconds
	var eps []netip.Addr
	for _, b := range c.Backends {
		serve(t, pt, b, b.IPv4)
		eps = append(eps, b.IPv4)
	}
	addr := lab.AddrPort(svc.ClusterIPs[0], 80)
	p.sync(t, snapshot(svc, []port{pt}, eps...))
	first := sameBackend(t, c.Client, addr, 5)
	// A uniform choice among 3 endpoints returns first in every one of
	// 30 rounds with probability 3^-30.
	for range rounds {
		time.Sleep(seconds*time.Second + 500*time.Millisecond)
		memory := nftIn(t, c.Node, "list", "set", string(nft.IPv4), nft.TableName, "affinity")
		if strings.Contains(memory, "10.96.0.94") {
			t.Fatalf("%ds after the last connection the client is still remembered:\n%s", seconds, memory)
		}
		if got := ask(t, c.Client, lab.TCP, "", addr).Name; got != first {
			return
		}
	}
	t.Fatalf("after %d timeouts every new connection still went to %s", rounds, first)
}

// generation is the node's ruleset generation.
func generation(t *testing.T, p *proxy) uint32 {
	t.Helper()
	g, err := p.k.Generation()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// sameBackend makes n connections to addr and returns the one backend that
// answered them all.
func sameBackend(t *testing.T, ns *lab.NS, addr string, n int) string {
	t.Helper()
	name := ""
	for i := range n {
		got := ask(t, ns, lab.TCP, "", addr)
		if name != "" && got.Name != name {
			t.Fatalf("connection %d went to %s, earlier ones to %s", i, got.Name, name)
		}
		name = got.Name
	}
	return name
}

// TestUDPConntrackCleanup: a UDP client that keeps its source port follows
// the Service to its new endpoint once the old one is removed, because the
// conntrack hook deletes the flow still DNATed to the old endpoint; through
// the ClusterIP and through the NodePort.
func TestUDPConntrackCleanup(t *testing.T) {
	c := lab.NewCluster(t, 2)
	p := newProxy(t, c)
	old, next := c.Backends[0], c.Backends[1]
	pt := port{name: "dns", proto: model.UDP, port: 53, target: 5353, nodePort: 30053}
	svc := service("dns", addrs("10.96.0.94"), pt)
	for _, b := range c.Backends {
		serve(t, pt, b, b.IPv4) // the old endpoint keeps answering, as a stuck flow would let it
	}
	hook, err := conntrack.NewHook(c.Node.FD(t), klog.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer hook.Close()
	deleted := map[model.AddressType]int{}
	hook.Observe = func(f model.AddressType, _ time.Duration, n int) { deleted[f] += n }
	for i, addr := range []string{lab.AddrPort(svc.ClusterIPs[0], 53), lab.AddrPort(c.NodeIPv4, 30053)} {
		t.Run(addr, func(t *testing.T) {
			src := fmt.Sprintf("%s:%d", c.ClientIPv4, 40053+i)
			before, after := snapshot(svc, []port{pt}, old.IPv4), snapshot(svc, []port{pt}, next.IPv4)
			p.sync(t, before)
			if got := ask(t, c.Client, lab.UDP, src, addr); got.Name != old.Name {
				t.Fatalf("answered by %s, want %s", got.Name, old.Name)
			}
			p.sync(t, after)
			if got := ask(t, c.Client, lab.UDP, src, addr); got.Name != old.Name {
				t.Fatalf("before the clean-up the flow should still go to %s (the test's control), got %s", old.Name, got.Name)
			}
			clear(deleted)
			hook.AfterSync(&before, &after, p.node)
			if got := ask(t, c.Client, lab.UDP, src, addr); got.Name != next.Name {
				t.Errorf("after the clean-up answered by %s, want %s", got.Name, next.Name)
			}
			// For kubeproxy_conntrack_reconciler_deleted_entries_total.
			if deleted[model.IPv4] != 1 || deleted[model.IPv6] != 0 {
				t.Errorf("observed deletions %v, want the one IPv4 flow", deleted)
			}
		})
	}
}

// TestTerminatingAndTopology: with zone hints and this node in zone-a, only
// the zone-a endpoint answers; when no endpoint is ready, the serving,
// terminating one does (a rolling update's last pod), and a terminating one
// that no longer serves never does.
func TestTerminatingAndTopology(t *testing.T) {
	c := lab.NewCluster(t, 3)
	p := newProxy(t, c)
	p.node.Labels = map[string]string{"topology.kubernetes.io/zone": "zone-a"}
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080}
	svc := service("web", addrs("10.96.0.95"), pt)
	for _, b := range c.Backends {
		serve(t, pt, b, b.IPv4)
	}
	addr := lab.AddrPort(svc.ClusterIPs[0], 80)
	slice := placed("web", pt, c.Backends, []string{"node-1", "node-2", "node-3"})
	for i, zone := range []string{"zone-b", "zone-a", "zone-b"} {
		slice.Endpoints[i].Zone, slice.Endpoints[i].HintZones = zone, []string{zone}
	}
	p.sync(t, model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{slice}})
	if got := sameBackend(t, c.Client, addr, 10); got != c.Backends[1].Name {
		t.Errorf("zone hints: answered by %s, want the zone-a endpoint %s", got, c.Backends[1].Name)
	}
	for i := range slice.Endpoints {
		slice.Endpoints[i].Ready, slice.Endpoints[i].Terminating = false, true
		slice.Endpoints[i].Serving = i == 2
	}
	p.sync(t, model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{slice}})
	if got := sameBackend(t, c.Client, addr, 10); got != c.Backends[2].Name {
		t.Errorf("no ready endpoint: answered by %s, want the serving terminating %s", got, c.Backends[2].Name)
	}
}
