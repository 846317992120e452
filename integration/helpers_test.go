//go:build integration

// Package integration tests nftproxy against a real kernel: the compiler's
// tables are committed over netlink into the node namespace of a lab
// cluster (see package lab) and real packets go through them. The tests run
// as root and skip otherwise:
//
//	sudo go test -tags integration ./integration/...
package integration

import (
	"bytes"
	"context"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// timeout bounds every request; a refused request returns long before.
const timeout = 2 * time.Second

// namespace is the Kubernetes namespace of every Service the tests build.
const namespace = "test"

// proxy programs a cluster's node namespace the way the sync loop does:
// compile, diff against what it committed last, apply over netlink.
type proxy struct {
	k         *kernel.Kernel
	node      model.Node
	opts      compile.Options
	committed nft.Ruleset
}

// newProxy connects to nftables in c's node namespace. The cluster's pod
// networks are its LocalCIDRs, so traffic from the external client to a
// ClusterIP is masqueraded and traffic from pods is not.
func newProxy(t *testing.T, c *lab.Cluster) *proxy {
	t.Helper()
	k, err := kernel.Open(c.Node.FD(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	opts := compile.DefaultOptions()
	opts.LocalCIDRs = []netip.Prefix{lab.ClusterCIDRv4, lab.ClusterCIDRv6}
	node := model.Node{Name: "node-1", IPs: []netip.Addr{c.NodeIPv4, c.NodeIPv6}}
	return &proxy{k: k, node: node, opts: opts}
}

// sync applies the difference between what was committed and what snap
// compiles to, and returns the plan it applied.
func (p *proxy) sync(t *testing.T, snap model.Snapshot) *nft.Plan {
	t.Helper()
	desired := p.compile(t, snap)
	plan := nft.Diff(p.committed, desired)
	if err := p.k.Apply(plan); err != nil {
		t.Fatalf("apply: %v\nplan:\n%s", err, plan.Text())
	}
	p.committed = desired
	return plan
}

// compile compiles snap for the proxy's node, failing on any problem.
func (p *proxy) compile(t *testing.T, snap model.Snapshot) nft.Ruleset {
	t.Helper()
	rs, problems := compile.Ruleset(&snap, p.node, p.opts)
	if len(problems) > 0 {
		t.Fatalf("compile: %v", problems)
	}
	return rs
}

// port is one Service port and the port its endpoints listen on.
type port struct {
	name     string
	proto    model.Protocol
	port     uint16 // the Service's port
	target   uint16 // the endpoints' port
	nodePort uint16 // 0: none
}

// labProto is the lab's name for the port's protocol.
func (p port) labProto() lab.Proto { return lab.Proto(strings.ToLower(string(p.proto))) }

// service returns a ClusterIP Service; a port with a node port makes it a
// NodePort Service.
func service(name string, clusterIPs []netip.Addr, ports ...port) model.Service {
	s := model.Service{Namespace: namespace, Name: name, Type: model.ClusterIP, ClusterIPs: clusterIPs}
	for _, p := range ports {
		s.Ports = append(s.Ports, model.ServicePort{Name: p.name, Protocol: p.proto, Port: p.port, NodePort: p.nodePort})
		if p.nodePort != 0 {
			s.Type = model.NodePort
		}
	}
	return s
}

// endpointSlices returns one EndpointSlice per address family of Service svc, with
// every address in addrs as a ready endpoint listening on the ports'
// targets. A family without addresses gets no slice.
func endpointSlices(svc string, ports []port, addrs ...netip.Addr) []model.EndpointSlice {
	var out []model.EndpointSlice
	for _, typ := range []model.AddressType{model.IPv4, model.IPv6} {
		s := model.EndpointSlice{Namespace: namespace, Name: svc + "-" + strings.ToLower(string(typ)), Service: svc, AddressType: typ}
		for _, p := range ports {
			s.Ports = append(s.Ports, model.EndpointPort{Name: p.name, Protocol: p.proto, Port: p.target})
		}
		for _, a := range addrs {
			if a.Is4() == (typ == model.IPv4) {
				s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true, NodeName: "node-1"})
			}
		}
		if len(s.Endpoints) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// snapshot holds one Service and its endpoints at addrs.
func snapshot(svc model.Service, ports []port, addrs ...netip.Addr) model.Snapshot {
	return model.Snapshot{Services: []model.Service{svc}, Slices: endpointSlices(svc.Name, ports, addrs...)}
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// serve starts a server for p on b's address a, named after b.
func serve(t *testing.T, p port, b *lab.Backend, a netip.Addr) {
	t.Helper()
	lab.Serve(t, p.labProto(), b.NS, lab.AddrPort(a, p.target), b.Name)
}

// ask sends one request from ns (from src, "" for any) and parses the reply.
func ask(t *testing.T, ns *lab.NS, p lab.Proto, src, addr string) lab.Reply {
	t.Helper()
	s, err := ns.RequestFrom(p, src, addr, timeout)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	r, err := lab.ParseReply(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// backend returns the backend of c that replied r, failing if none did.
func backend(t *testing.T, c *lab.Cluster, r lab.Reply) *lab.Backend {
	t.Helper()
	for _, b := range c.Backends {
		if b.Name == r.Name {
			return b
		}
	}
	t.Fatalf("reply from %q, which is no backend", r.Name)
	return nil
}

// gateway is the node's address on b's link in a's family: what b sees as
// the source of masqueraded traffic.
func gateway(b *lab.Backend, a netip.Addr) netip.Addr {
	if a.Is4() {
		return b.GatewayIPv4
	}
	return b.GatewayIPv6
}

// nftIn runs nft inside ns and returns its output; it fails the test
// unless nft exits 0 with nothing on stderr.
func nftIn(t *testing.T, ns *lab.NS, args ...string) string {
	t.Helper()
	stdout, stderr, err := runIn(ns, "nft", args...)
	if err != nil || stderr != "" {
		t.Fatalf("%s: nft %s: %v, stderr: %q", ns.Name, strings.Join(args, " "), err, stderr)
	}
	return stdout
}

// runIn runs a command inside ns with a bounded time and returns its
// stdout and stderr apart.
func runIn(ns *lab.NS, name string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// mixedSnapshot has a Service of every shape the compiler programs, on
// addresses and node ports that do not collide with examples/: ClusterIP
// over every protocol and both families, NodePort, LoadBalancer with an
// externalIP, no endpoints, and 40 endpoints (split into bucket chains).
func mixedSnapshot() model.Snapshot {
	var snap model.Snapshot
	add := func(s model.Service, ports []port, eps []netip.Addr) {
		snap.Services = append(snap.Services, s)
		snap.Slices = append(snap.Slices, endpointSlices(s.Name, ports, eps...)...)
	}
	web := []port{
		{name: "http", proto: model.TCP, port: 80, target: 8080},
		{name: "dns", proto: model.UDP, port: 53, target: 5353},
		{name: "assoc", proto: model.SCTP, port: 132, target: 9132},
	}
	shop := []port{{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 31080}}
	api := []port{{name: "https", proto: model.TCP, port: 443, target: 8443, nodePort: 31443}}
	pending := []port{{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 31050}}
	add(service("web", addrs("10.96.1.10", "fd00:96::1:10"), web...), web, addrs("10.244.1.2", "10.244.2.2", "fd00:10:244:1::2"))
	add(service("shop", addrs("10.96.1.20", "fd00:96::1:20"), shop...), shop, addrs("10.244.1.3", "fd00:10:244:1::3"))
	lb := service("api", addrs("10.96.1.30"), api...)
	lb.Type, lb.ExternalIPs, lb.LoadBalancerIPs = model.LoadBalancer, addrs("192.0.2.51"), addrs("203.0.113.20")
	add(lb, api, addrs("10.244.1.4"))
	add(service("pending", addrs("10.96.1.50", "fd00:96::1:50"), pending...), pending, nil)
	var many []netip.Addr
	for i := range 40 {
		many = append(many, netip.AddrFrom4([4]byte{10, 244, 3, byte(10 + i)}))
	}
	add(service("big", addrs("10.96.1.60"), web[0]), web[:1], many)
	// Session affinity: chains of its own, recall rules keyed by ID, and
	// bucket chains for the large one.
	sticky := []port{{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 31070}}
	s := service("sticky", addrs("10.96.2.70", "fd00:96::2:70"), sticky...)
	s.AffinitySeconds = 600
	add(s, sticky, addrs("10.244.1.7", "10.244.2.7", "fd00:10:244:1::7"))
	s = service("sticky-big", addrs("10.96.2.80"), web[0])
	s.AffinitySeconds = 10800
	add(s, web[:1], many)
	// ServiceCIDRs: the set of ranges; adjacent ones stay two elements.
	snap.ServiceCIDRs = []model.ServiceCIDR{
		{Name: "kubernetes", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:96::/108")}},
		{Name: "next", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.97.0.0/16")}},
	}
	return snap
}

// diffLines compares two texts line by line, for readable failures:
// "" when equal, else cmp's (-want +got) report.
func diffLines(want, got string) string {
	return cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n"))
}

// applied programs rs over netlink into a new namespace named after
// prefix, as the agent's first sync would, and returns the namespace and
// the applier, closed at cleanup.
func applied(t *testing.T, prefix string, rs nft.Ruleset) (*lab.NS, *kernel.Kernel) {
	t.Helper()
	ns := lab.NewNS(t, prefix)
	k, err := kernel.Open(ns.FD(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	if err := k.Apply(nft.Diff(nil, rs)); err != nil {
		t.Fatalf("apply over netlink: %v", err)
	}
	return ns, k
}
