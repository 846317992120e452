package trace_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// The cluster the tests compile for: pods in 10.0.0.0/16 and fd00:10::/64,
// Services in 10.96.0.0/12 and fd00:96::/112, the node at 192.168.0.10 and
// 2001:db8::10.
var (
	node = model.Node{
		Name: "node-a",
		IPs:  addrs("192.168.0.10", "2001:db8::10"),
	}
	nodeIP   = node.IPs[0]
	nodeIP6  = node.IPs[1]
	podCIDRs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/16"), netip.MustParsePrefix("fd00:10::/64")}
	clientIP = netip.MustParseAddr("10.0.9.9")      // a pod that is no endpoint
	remoteIP = netip.MustParseAddr("203.0.113.7")   // outside the cluster
	remote6  = netip.MustParseAddr("2001:db8:1::7") // outside the cluster
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// options are the compiler defaults plus the cluster's pod CIDRs.
func options() compile.Options {
	o := compile.DefaultOptions()
	o.LocalCIDRs = podCIDRs
	return o
}

// service returns a ClusterIP Service default/name.
func service(name string, clusterIPs []netip.Addr, ports ...model.ServicePort) model.Service {
	return model.Service{Namespace: "default", Name: name, Type: model.ClusterIP, ClusterIPs: clusterIPs, Ports: ports}
}

func port(name string, proto model.Protocol, port uint16) model.ServicePort {
	return model.ServicePort{Name: name, Protocol: proto, Port: port}
}

func epPort(name string, proto model.Protocol, port uint16) model.EndpointPort {
	return model.EndpointPort{Name: name, Protocol: proto, Port: port}
}

// slice returns an EndpointSlice of Service default/svc with one endpoint
// per address, ready unless listed in notReady.
func slice(svc, name string, ports []model.EndpointPort, ready []netip.Addr, notReady ...netip.Addr) model.EndpointSlice {
	s := model.EndpointSlice{Namespace: "default", Name: name, Service: svc, AddressType: model.IPv4, Ports: ports}
	if len(ready) > 0 && ready[0].Is6() || len(notReady) > 0 && notReady[0].Is6() {
		s.AddressType = model.IPv6
	}
	for _, a := range ready {
		s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true})
	}
	for _, a := range notReady {
		s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}})
	}
	return s
}

// compile compiles snap for node and returns the table of family f.
func compileTable(t *testing.T, snap *model.Snapshot, o compile.Options, f nft.Family) *nft.Table {
	t.Helper()
	rs, problems := compile.Ruleset(snap, node, o)
	if len(problems) > 0 {
		t.Fatalf("Compile problems: %v", problems)
	}
	if rs[f] == nil {
		t.Fatalf("Compile made no %s table", f)
	}
	return rs[f]
}

func packet(saddr, daddr netip.Addr, proto uint8, dport uint16) trace.Packet {
	return trace.Packet{Saddr: saddr, Daddr: daddr, Proto: proto, Dport: dport}
}

// fromNetwork and fromHost are the two paths through the node.
var (
	fromNetwork = trace.Options{From: trace.FromNetwork, LocalAddrs: node.IPs}
	fromHost    = trace.Options{From: trace.FromHost, LocalAddrs: node.IPs}
)

// summary traces p and returns its results as text: "accept
// 10.0.1.1:8080 masquerade" -> "1/3".
func summary(t *testing.T, table *nft.Table, p trace.Packet, o trace.Options) map[string]string {
	t.Helper()
	outs, err := trace.Trace(table, p, o)
	if err != nil {
		t.Fatalf("Trace(%+v): %v", p, err)
	}
	got := map[string]string{}
	for r, prob := range trace.Summary(outs) {
		got[r.String()] = prob.RatString()
	}
	return got
}

// checkSummary compares the summary of tracing p with want.
func checkSummary(t *testing.T, table *nft.Table, p trace.Packet, o trace.Options, want map[string]string) {
	t.Helper()
	if diff := cmp.Diff(want, summary(t, table, p, o)); diff != "" {
		t.Errorf("trace %s %s -> %s proto %d port %d: (-want +got)\n%s\ntable:\n%s",
			o.From, p.Saddr, p.Daddr, p.Proto, p.Dport, diff, table.Text())
	}
}

// spread returns "accept addr:port[ masquerade]" -> "1/n" for each address.
func spread(eps []netip.Addr, port uint16, masq bool) map[string]string {
	want := map[string]string{}
	for _, a := range eps {
		r := trace.Result{Verdict: trace.Accept, Dest: netip.AddrPortFrom(a, port), Masqueraded: masq}
		want[r.String()] = fmt.Sprintf("1/%d", len(eps))
	}
	if len(eps) == 1 {
		for k := range want {
			want[k] = "1"
		}
	}
	return want
}

func accepted(dest netip.Addr, port uint16, masq bool) map[string]string {
	return spread([]netip.Addr{dest}, port, masq)
}

func rejected(dest netip.Addr, port uint16) map[string]string {
	r := trace.Result{Verdict: trace.Reject, Dest: netip.AddrPortFrom(dest, port)}
	return map[string]string{r.String(): "1"}
}
