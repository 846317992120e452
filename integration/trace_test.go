//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/proxy/explain"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestTracePredictsPackets: for each scenario of the policy tests,
// `nftproxy trace`, run in the node's namespace as an operator would (it
// reads the tables from the kernel), predicts the outcomes of a new
// connection; then real connections go through the same tables, and each
// must land on a predicted outcome: an endpoint trace named, with the
// source masqueraded exactly when trace said so. Every predicted endpoint
// must answer within a bounded number of connections, and every predicted
// drop or reject must happen. The trace text and what the packets did are
// logged side by side (go test -v).
func TestTracePredictsPackets(t *testing.T) {
	bin := lab.Nftproxy(t)
	for _, sc := range traceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			c := lab.NewCluster(t, 3)
			up := addUplink(t, c) // a default route, as a real node has: see TestReject
			p := newProxy(t, c)
			sc.run(t, &traceLab{t: t, c: c, up: up, p: p, bin: bin})
		})
	}
}

// traceLab is one scenario's cluster, proxy and the built binary. up is
// the node's default route: a packet the node forwards without DNAT ends
// there.
type traceLab struct {
	t   *testing.T
	c   *lab.Cluster
	up  *lab.NS
	p   *proxy
	bin string
	// caught are the addresses up answers for (catch).
	caught map[netip.Addr]bool
}

var traceScenarios = []struct {
	name string
	run  func(t *testing.T, l *traceLab)
}{
	{"ClusterIP", traceClusterIP},
	{"NodePort", traceNodePort},
	{"LoadBalancer with source ranges", traceSourceRanges},
	{"externalTrafficPolicy Local", traceExternalLocal},
	{"internalTrafficPolicy Local", traceInternalLocal},
	{"no endpoints", traceNoEndpoints},
	{"unallocated ClusterIP", traceUnallocated},
	{"terminating endpoints", traceTerminating},
	{"session affinity", traceAffinity},
}

// serveAll starts a server for pt on every backend.
func (l *traceLab) serveAll(pt port) {
	for _, b := range l.c.Backends {
		serve(l.t, pt, b, b.IPv4)
		serve(l.t, pt, b, b.IPv6)
	}
}

// trace runs `nftproxy trace ARGS -o json` in the node's namespace, and
// logs the same trace as text.
func (l *traceLab) trace(args ...string) *explain.Report {
	l.t.Helper()
	text := runOK(l.t, l.c.Node, l.bin, append([]string{"trace"}, args...)...)
	l.t.Logf("$ nftproxy trace %s\n%s", strings.Join(args, " "), text)
	out := runOK(l.t, l.c.Node, l.bin, append(append([]string{"trace"}, args...), "-o", "json")...)
	var rep explain.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		l.t.Fatalf("trace -o json: %v\n%s", err, out)
	}
	if rep.Schema != explain.Schema || rep.Source != "kernel" {
		l.t.Fatalf("trace -o json: schema %q, source %q", rep.Schema, rep.Source)
	}
	return &rep
}

// client is who sends the real connections: a namespace and its address.
type client struct {
	ns   *lab.NS
	addr netip.Addr
}

func (l *traceLab) outside() client  { return client{l.c.Client, l.c.ClientIPv4} }
func (l *traceLab) outside6() client { return client{l.c.Client, l.c.ClientIPv6} }
func (l *traceLab) pod(i int) client { return client{l.c.Backends[i].NS, l.c.Backends[i].IPv4} }

// check traces a connection from cl to dst and sends real ones.
func (l *traceLab) check(cl client, proto lab.Proto, dst string) *explain.Report {
	l.t.Helper()
	rep := l.trace("--src", cl.addr.String(), "--dst", dst, "--proto", string(proto))
	l.t.Logf("real packets from %s to %s (%s): %s", cl.addr, dst, proto, l.packets(rep, cl, proto, dst, 0))
	return rep
}

// checkFirst is check for a trace that holds for the first connection
// only (session affinity remembers it): it sends that one.
func (l *traceLab) checkFirst(cl client, proto lab.Proto, dst string) *explain.Report {
	l.t.Helper()
	rep := l.trace("--src", cl.addr.String(), "--dst", dst, "--proto", string(proto))
	l.t.Logf("real packets from %s to %s (%s): %s", cl.addr, dst, proto, l.packets(rep, cl, proto, dst, 1))
	return rep
}

// packets sends real connections like the traced one and checks them
// against rep's outcomes; it returns what they did, for the log. only > 0
// sends that many connections and does not wait for every endpoint.
func (l *traceLab) packets(rep *explain.Report, cl client, proto lab.Proto, dst string, only int) string {
	l.t.Helper()
	verdicts := map[string]bool{}
	for _, o := range rep.Outcomes {
		verdicts[o.Verdict] = true
	}
	switch {
	case len(verdicts) != 1:
		l.t.Fatalf("outcomes with several verdicts %v: this test sends connections for one", verdicts)
	case verdicts["drop"]:
		l.catch(proto, dst)
		reply, err := cl.ns.RequestFrom(proto, cl.addr.String(), dst, timeout)
		if err == nil || lab.IsRefused(err) || !lab.IsTimeout(err) {
			l.t.Fatalf("trace predicts a drop; the connection got %q, %v", reply, err)
		}
		return "no answer: dropped, as predicted (" + err.Error() + ")"
	case verdicts["reject"]:
		_, err := cl.ns.RequestFrom(proto, cl.addr.String(), dst, timeout)
		if !lab.IsRefused(err) {
			l.t.Fatalf("trace predicts a reject; the connection got %v", err)
		}
		return "refused, as predicted (" + err.Error() + ")"
	}
	return l.accepted(rep, cl, proto, dst, only)
}

// catch makes the node's upstream answer for dst when dst is not the
// node's: a packet that was not dropped, and went on unchanged, gets a
// reply from "upstream" rather than the same silence as a drop.
func (l *traceLab) catch(proto lab.Proto, dst string) {
	l.t.Helper()
	ap := netip.MustParseAddrPort(dst)
	if ap.Addr() == l.c.NodeIPv4 || ap.Addr() == l.c.NodeIPv6 {
		return // not dropped, it would be refused: no listener on the node
	}
	if l.caught == nil {
		l.caught = map[netip.Addr]bool{}
		l.up.Route(l.t, "default", "100.64.0.1") // replies go back through the node
	}
	if !l.caught[ap.Addr()] {
		l.caught[ap.Addr()] = true
		l.up.MustExec(l.t, "ip", "addr", "add", netip.PrefixFrom(ap.Addr(), ap.Addr().BitLen()).String(), "dev", "lo")
	}
	lab.Serve(l.t, proto, l.up, dst, "upstream")
}

// maxConnections bounds the connections that must reach every predicted
// endpoint: one of probability 1/3 is missed by 60 with probability 3e-11.
const maxConnections = 60

// accepted sends connections until every predicted endpoint answered (at
// least 10, at most maxConnections; or exactly only), each from a
// predicted endpoint, seeing the client's address or the node's as trace
// said.
func (l *traceLab) accepted(rep *explain.Report, cl client, proto lab.Proto, dst string, only int) string {
	l.t.Helper()
	want := map[netip.Addr]bool{} // endpoint -> masqueraded
	for _, o := range rep.Outcomes {
		if o.Endpoint == nil {
			l.t.Fatalf("trace predicts %s unchanged: this test sends connections to Services", o.Destination)
		}
		want[netip.MustParseAddrPort(o.Destination).Addr()] = o.Masquerade != nil
	}
	seen := map[netip.Addr]int{}
	n := 0
	more := func() bool { return n < maxConnections && (n < 10 || len(seen) < len(want)) }
	if only > 0 {
		more = func() bool { return n < only }
	}
	for ; more(); n++ {
		r := ask(l.t, cl.ns, proto, cl.addr.String(), dst)
		b := backend(l.t, l.c, r)
		ep := b.IPv4
		if cl.addr.Is6() {
			ep = b.IPv6
		}
		masq, ok := want[ep]
		if !ok {
			l.t.Fatalf("connection %d answered by %s (%s), which trace did not predict", n, b.Name, ep)
		}
		if wantSrc := map[bool]netip.Addr{false: cl.addr, true: gateway(b, ep)}[masq]; r.Source != wantSrc {
			l.t.Fatalf("connection %d: %s saw source %s, want %s (trace: masqueraded %t)", n, b.Name, r.Source, wantSrc, masq)
		}
		seen[ep]++
	}
	if only == 0 && len(seen) < len(want) {
		l.t.Fatalf("after %d connections only %v answered; trace predicted %v", n, seen, want)
	}
	return countsText(n, seen, want)
}

func countsText(n int, seen map[netip.Addr]int, masq map[netip.Addr]bool) string {
	var parts []string
	for a, k := range seen {
		s := fmt.Sprintf("%s %d", a, k)
		if masq[a] {
			s += " (saw the node's address: masqueraded)"
		} else {
			s += " (saw the client's address)"
		}
		parts = append(parts, s)
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d connections: %s", n, strings.Join(parts, ", "))
}

func traceClusterIP(t *testing.T, l *traceLab) {
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080}
	svc := service("web", addrs("10.96.0.80", "fd00:96::80"), pt)
	l.serveAll(pt)
	var eps []netip.Addr
	for _, b := range l.c.Backends {
		eps = append(eps, b.IPv4, b.IPv6)
	}
	l.p.sync(t, snapshot(svc, []port{pt}, eps...))
	rep := l.check(l.pod(1), lab.TCP, "10.96.0.80:80") // a Pod, and an endpoint: hairpin when it picks itself
	if rep.From.Origin != "pod" || rep.Service == nil || rep.Service.Name != "web" || len(rep.Outcomes) != 3 {
		t.Errorf("from %+v, service %+v, %d outcomes; want a Pod, test/web, 3", rep.From, rep.Service, len(rep.Outcomes))
	}
	l.check(l.outside(), lab.TCP, "10.96.0.80:80")
	l.check(l.outside6(), lab.TCP, "[fd00:96::80]:80")
}

func traceNodePort(t *testing.T, l *traceLab) {
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30080}
	svc := service("shop", addrs("10.96.0.81"), pt)
	l.serveAll(pt)
	l.p.sync(t, snapshot(svc, []port{pt}, l.c.Backends[0].IPv4, l.c.Backends[1].IPv4))
	l.check(l.outside(), lab.TCP, lab.AddrPort(l.c.NodeIPv4, 30080))
	l.check(l.pod(2), lab.TCP, lab.AddrPort(l.c.NodeIPv4, 30080))
}

func traceSourceRanges(t *testing.T, l *traceLab) {
	pt := port{name: "https", proto: model.TCP, port: 443, target: 8443, nodePort: 30443}
	svc := service("api", addrs("10.96.0.82"), pt)
	svc.Type, svc.LoadBalancerIPs = model.LoadBalancer, addrs("203.0.113.82")
	l.serveAll(pt)
	for _, ranges := range []string{"192.0.2.0/24", netip.PrefixFrom(l.c.ClientIPv4, 24).Masked().String()} {
		svc.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix(ranges)}
		l.p.sync(t, snapshot(svc, []port{pt}, l.c.Backends[0].IPv4))
		rep := l.check(l.outside(), lab.TCP, "203.0.113.82:443")
		if outside := strings.HasPrefix(ranges, "192.0.2."); outside != (rep.Outcomes[0].Verdict == "drop") {
			t.Errorf("ranges %s, client %s: trace says %s", ranges, l.c.ClientIPv4, rep.Outcomes[0].Verdict)
		} else if outside && !strings.HasSuffix(rep.Outcomes[0].Reason, "(allowed: 192.0.2.0/24)") {
			t.Errorf("reason %q does not name the allowed range", rep.Outcomes[0].Reason)
		}
	}
	// The control of the drop checks: on a port that is no Service's, the
	// load-balancer IP is forwarded unchanged and upstream answers.
	l.catch(lab.TCP, "203.0.113.82:444")
	l.trace("--src", l.c.ClientIPv4.String(), "--dst", "203.0.113.82:444")
	if r := ask(t, l.c.Client, lab.TCP, "", "203.0.113.82:444"); r.Name != "upstream" {
		t.Errorf("a packet no rule drops was answered by %+v, want upstream: the drop checks prove nothing", r)
	}
}

func traceExternalLocal(t *testing.T, l *traceLab) {
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30090}
	svc := service("local", addrs("10.96.0.83"), pt)
	svc.Type, svc.LoadBalancerIPs, svc.ExternalLocal = model.LoadBalancer, addrs("203.0.113.83"), true
	l.serveAll(pt)
	both := placed("local", pt, l.c.Backends[:2], []string{"node-1", "node-2"})
	l.p.sync(t, model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{both}})
	l.check(l.outside(), lab.TCP, lab.AddrPort(l.c.NodeIPv4, 30090))
	l.check(l.outside(), lab.TCP, "203.0.113.83:80")
	remote := placed("local", pt, l.c.Backends[1:2], []string{"node-2"})
	l.p.sync(t, model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{remote}})
	rep := l.check(l.outside(), lab.TCP, lab.AddrPort(l.c.NodeIPv4, 30090))
	if !strings.Contains(rep.Outcomes[0].Reason, "externalTrafficPolicy: Local, and no endpoint of it is on this node") {
		t.Errorf("reason %q", rep.Outcomes[0].Reason)
	}
	l.check(l.outside(), lab.TCP, "203.0.113.83:80")
	l.check(l.pod(0), lab.TCP, lab.AddrPort(l.c.NodeIPv4, 30090)) // a Pod still reaches the other node's endpoint
	l.serviceMatchesPackets("test/local")
}

// serviceMatchesPackets runs `trace --service` and checks that its
// external NodePort entry says what the single-packet trace said: dropped.
func (l *traceLab) serviceMatchesPackets(key string) {
	l.t.Helper()
	out := runOK(l.t, l.c.Node, l.bin, "trace", "--service", key, "-o", "json")
	var rep explain.ServiceReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		l.t.Fatal(err)
	}
	var got []string
	for _, e := range rep.Entries {
		for _, tr := range e.Traces {
			got = append(got, fmt.Sprintf("%s from %s: %s", e.Entry, tr.From.Origin, tr.Outcomes[0].Verdict))
		}
	}
	// The table alone cannot tell a load-balancer IP without source ranges
	// from an externalIP.
	for _, want := range []string{"NodePort from external: drop", "NodePort from pod: accept", "externalIP or load-balancer IP from external: drop"} {
		if !slices.Contains(got, want) {
			l.t.Errorf("trace --service %s: %q not among %q", key, want, got)
		}
	}
}

func traceInternalLocal(t *testing.T, l *traceLab) {
	pt := port{name: "dns", proto: model.UDP, port: 53, target: 5353}
	svc := service("dns", addrs("10.96.0.84"), pt)
	svc.InternalLocal = true
	l.serveAll(pt)
	l.p.sync(t, model.Snapshot{Services: []model.Service{svc},
		Slices: []model.EndpointSlice{placed("dns", pt, l.c.Backends[:2], []string{"node-1", "node-2"})}})
	l.check(l.pod(2), lab.UDP, "10.96.0.84:53")
	l.p.sync(t, model.Snapshot{Services: []model.Service{svc},
		Slices: []model.EndpointSlice{placed("dns", pt, l.c.Backends[1:2], []string{"node-2"})}})
	l.check(l.pod(2), lab.UDP, "10.96.0.84:53")
}

func traceNoEndpoints(t *testing.T, l *traceLab) {
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30085}
	svc := service("pending", addrs("10.96.0.85"), pt)
	l.p.sync(t, snapshot(svc, []port{pt}))
	l.check(l.pod(0), lab.TCP, "10.96.0.85:80")
	l.check(l.outside(), lab.TCP, lab.AddrPort(l.c.NodeIPv4, 30085))
	l.check(l.pod(0), lab.TCP, "10.96.0.85:81") // a port the Service does not have
}

func traceUnallocated(t *testing.T, l *traceLab) {
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080}
	svc := service("web", addrs("10.96.0.88"), pt)
	l.serveAll(pt)
	snap := snapshot(svc, []port{pt}, l.c.Backends[0].IPv4)
	snap.ServiceCIDRs = []model.ServiceCIDR{{Name: "kubernetes", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}}}
	l.p.sync(t, snap)
	rep := l.check(l.pod(1), lab.TCP, "10.96.0.99:80") // in the ServiceCIDR, held by no Service
	if !strings.HasPrefix(rep.Outcomes[0].Reason, "unallocated ClusterIP: 10.96.0.99 is in the ServiceCIDR 10.96.0.0/16") {
		t.Errorf("reason %q", rep.Outcomes[0].Reason)
	}
	l.check(l.pod(1), lab.TCP, "10.96.0.88:80")
}

func traceTerminating(t *testing.T, l *traceLab) {
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080}
	svc := service("rolling", addrs("10.96.0.86"), pt)
	l.serveAll(pt)
	s := placed("rolling", pt, l.c.Backends, []string{"node-1", "node-2", "node-3"})
	for i := range s.Endpoints {
		s.Endpoints[i].Ready, s.Endpoints[i].Terminating, s.Endpoints[i].Serving = false, true, i == 2
	}
	l.p.sync(t, model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{s}})
	rep := l.check(l.outside(), lab.TCP, "10.96.0.86:80")
	if len(rep.Outcomes) != 1 || !strings.HasPrefix(rep.Outcomes[0].Destination, l.c.Backends[2].IPv4.String()+":") {
		t.Errorf("trace: %+v; want only the serving, terminating endpoint", rep.Outcomes)
	}
}

func traceAffinity(t *testing.T, l *traceLab) {
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30087}
	svc := service("sticky", addrs("10.96.0.87"), pt)
	svc.AffinitySeconds = 600
	l.serveAll(pt)
	l.p.sync(t, snapshot(svc, []port{pt}, l.c.Backends[0].IPv4, l.c.Backends[1].IPv4, l.c.Backends[2].IPv4))
	// Before any connection: nobody is remembered, three equal choices;
	// the first connection takes one of them.
	rep := l.checkFirst(l.outside(), lab.TCP, "10.96.0.87:80")
	if len(rep.Outcomes) != 3 {
		t.Fatalf("first trace: %d outcomes, want 3", len(rep.Outcomes))
	}
	// The connection made the kernel remember the client: trace reads
	// that memory and predicts that one endpoint, through any entry.
	for _, dst := range []string{"10.96.0.87:80", lab.AddrPort(l.c.NodeIPv4, 30087)} {
		rep = l.check(l.outside(), lab.TCP, dst)
		if a := rep.Outcomes[0].Affinity; len(rep.Outcomes) != 1 || a == nil || !a.Remembered || a.ExpiresInSeconds == 0 || a.TimeoutSeconds != 600 {
			t.Errorf("%s: after connections: %+v; want one remembered endpoint with time left", dst, rep.Outcomes)
		}
	}
}
