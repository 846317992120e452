//go:build integration

package integration

import (
	"io"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/metrics"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestDropCounters: each way the table drops or rejects a new connection
// counts into the counter of its reason and into no other, as real packets
// show: after each request, the counter of its reason grew and every other
// counter stayed where it was. The /metrics series read from the same
// counters are logged after each reason. Both opt-in drops are on.
func TestDropCounters(t *testing.T) {
	c := lab.NewCluster(t, 2)
	addUplink(t, c) // routes to unallocated addresses exist, as on a real node
	p := newProxy(t, c)
	p.opts.DropInvalid, p.opts.DropNodePortsOnOtherAddresses = true, true
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30080}
	udp := port{name: "dns", proto: model.UDP, port: 53, target: 5353}
	for _, b := range c.Backends {
		serve(t, pt, b, b.IPv4)
	}
	snap := counterSnapshot(c, pt, udp)
	p.sync(t, snap)
	m := metrics.New()
	m.CountPackets(func(f nft.Family) ([]metrics.PacketCount, error) { return readCounts(p, f) })
	client, pod := c.Client, c.Backends[0].NS
	for _, tc := range []struct {
		counter string
		send    func() error
	}{
		{nft.CounterRejectNoEndpoints, func() error { return request(client, lab.TCP, "10.96.0.20:80") }},
		// A NodePort on a NodePort address passes the address check.
		{nft.CounterRejectNoEndpoints, func() error { return request(client, lab.TCP, lab.AddrPort(c.NodeIPv4, 30020)) }},
		{nft.CounterRejectUnknownPort, func() error { return request(client, lab.TCP, "10.96.0.10:81") }},
		{nft.CounterDropUnallocated, func() error { return request(pod, lab.UDP, "10.96.0.200:53") }},
		{nft.CounterDropSourceRange, func() error { return request(client, lab.UDP, "203.0.113.30:53") }},
		{nft.CounterDropNoLocalEndpoints, func() error { return request(client, lab.TCP, lab.AddrPort(c.NodeIPv4, 30080)) }},
		{nft.CounterDropNoLocalEndpoints, func() error { return request(pod, lab.UDP, "10.96.0.50:53") }},
		{nft.CounterDropNodePortAddress, func() error { return request(c.Node, lab.TCP, "127.0.0.1:30080") }},
		{nft.CounterDropInvalidState, func() error { return sendInvalid(client, c.ClientIPv4, c.Backends[0].IPv4, pt.target) }},
	} {
		before := counts(t, p)
		err := tc.send()
		after := counts(t, p)
		for name, n := range after {
			grew := n - before[name]
			switch {
			case name == tc.counter && grew == 0:
				t.Errorf("%s: did not count (request: %v)", name, err)
			case name != tc.counter && grew != 0:
				t.Errorf("%s counted %d packets of a request for %s", name, grew, tc.counter)
			}
		}
		t.Logf("after a request for %s (%v):\n%s", tc.counter, err, scrape(t, m))
	}
}

// counterSnapshot has one Service for each reason to drop or reject:
// web (ClusterIP 10.96.0.10) with endpoints, empty (10.96.0.20, NodePort
// 30020) without,
// ranged (load-balancer IP 203.0.113.30 open to 192.0.2.0/24 only),
// remote (a NodePort with externalTrafficPolicy Local) and itp (ClusterIP
// 10.96.0.50 with internalTrafficPolicy Local), whose endpoints are on
// node-2; and the ServiceCIDR 10.96.0.0/16.
func counterSnapshot(c *lab.Cluster, pt, udp port) model.Snapshot {
	web := service("web", addrs("10.96.0.10"), port{name: "http", proto: model.TCP, port: 80, target: 8080})
	empty := service("empty", addrs("10.96.0.20"), port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30020})
	ranged := service("ranged", addrs("10.96.0.30"), udp)
	ranged.Type, ranged.LoadBalancerIPs = model.LoadBalancer, addrs("203.0.113.30")
	ranged.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	remote := service("remote", addrs("10.96.0.40"), pt)
	remote.ExternalLocal = true
	itp := service("itp", addrs("10.96.0.50"), udp)
	itp.InternalLocal = true
	elsewhere := []string{"node-2", "node-2"}
	snap := model.Snapshot{Services: []model.Service{web, empty, ranged, remote, itp},
		Slices: []model.EndpointSlice{placed("web", pt, c.Backends, []string{"node-1", "node-2"}),
			placed("ranged", udp, c.Backends, elsewhere), placed("remote", pt, c.Backends, elsewhere),
			placed("itp", udp, c.Backends, elsewhere)}}
	snap.ServiceCIDRs = []model.ServiceCIDR{{Name: "kubernetes", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}}}
	return snap
}

// request sends one request that the table must drop or reject.
func request(ns *lab.NS, p lab.Proto, addr string) error {
	reply, err := ns.Request(p, addr, timeout)
	if err == nil {
		return &unexpectedReply{reply}
	}
	return err
}

type unexpectedReply struct{ reply string }

func (e *unexpectedReply) Error() string { return "answered: " + e.reply }

// counts reads every counter of the IPv4 table, by name.
func counts(t *testing.T, p *proxy) map[string]uint64 {
	t.Helper()
	vs, err := p.k.ReadCounters(nft.IPv4)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, v := range vs {
		out[v.Name] = v.Packets
	}
	if len(out) != len(nft.Counters) {
		t.Fatalf("counters %v, want one of each of %v", out, nft.Counters)
	}
	return out
}

func readCounts(p *proxy, f nft.Family) ([]metrics.PacketCount, error) {
	vs, err := p.k.ReadCounters(f)
	out := make([]metrics.PacketCount, len(vs))
	for i, v := range vs {
		out[i] = metrics.PacketCount{Name: v.Name, Packets: v.Packets}
	}
	return out, err
}

// scrape returns the packet counters' lines of /metrics.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "nftproxy_packets_") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
