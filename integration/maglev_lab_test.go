//go:build integration

package integration

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/nft/trace"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// maglevLab is two nodes in front of the same endpoints, as behind a load
// balancer whose ECMP may send a connection to either: each node has its
// own client namespace, where the client has the same address, and both
// route the pod network to one namespace that holds every endpoint address
// (on its loopback link) with a server on each, named after its address.
type maglevLab struct {
	nodes []*maglevNode
	pods  *lab.NS
	eps   []netip.Addr
}

// maglevNode is one node: its namespace, the client behind it, its address
// and the proxy that programs it for its own node name.
type maglevNode struct {
	ns, client *lab.NS
	addr       netip.Addr
	p          *proxy
}

// The client's address behind every node, the Service's addresses and the
// endpoints' port.
var (
	maglevClient     = netip.MustParseAddr("198.51.100.2")
	maglevClusterIP  = netip.MustParseAddr("10.96.0.10")
	maglevExternalIP = netip.MustParseAddr("203.0.113.10")
	maglevPort       = port{name: "http", proto: model.TCP, port: 80, target: 8080, nodePort: 30080}
)

// newMaglevLab builds nodes named node-a, node-b, ... and n endpoints;
// every node compiles with Maglev tables of m slots.
func newMaglevLab(t *testing.T, nodes, n int, m uint32) *maglevLab {
	t.Helper()
	l := &maglevLab{pods: lab.NewNS(t, "pods")}
	for i := range n {
		a := netip.AddrFrom4([4]byte{10, 244, byte((i + 1) >> 8), byte(i + 1)})
		l.pods.MustExec(t, "ip", "addr", "add", a.String()+"/32", "dev", "lo")
		lab.ServeTCP(t, l.pods, lab.AddrPort(a, maglevPort.target), a.String())
		l.eps = append(l.eps, a)
	}
	for i := range nodes {
		l.nodes = append(l.nodes, l.addNode(t, i, m))
	}
	return l
}

// addNode adds node i: 198.51.100.(2i+1) toward its client, 10.250.i.1
// toward the pods.
func (l *maglevLab) addNode(t *testing.T, i int, m uint32) *maglevNode {
	t.Helper()
	nd := &maglevNode{ns: lab.NewNS(t, "mnode"), client: lab.NewNS(t, "mclient"),
		addr: netip.AddrFrom4([4]byte{198, 51, 100, byte(2*i + 1)})}
	nd.ns.Sysctl(t, "net.ipv4.ip_forward", "1")
	lab.Connect(t, nd.ns, []string{nd.addr.String() + "/24"}, nd.client, []string{maglevClient.String() + "/24"})
	nd.client.Route(t, "default", nd.addr.String())
	link := fmt.Sprintf("10.250.%d.", i)
	lab.Connect(t, nd.ns, []string{link + "1/24"}, l.pods, []string{link + "2/24"})
	nd.ns.Route(t, "10.244.0.0/16", link+"2")
	k, err := kernel.Open(nd.ns.FD(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	opts := compile.DefaultOptions()
	opts.LocalCIDRs = []netip.Prefix{lab.ClusterCIDRv4}
	opts.Maglev = compile.Maglev{TableSize: m, Seed: 0x5eed}
	nd.p = &proxy{k: k, opts: opts, node: model.Node{Name: fmt.Sprintf("node-%c", 'a'+i), IPs: []netip.Addr{nd.addr}}}
	return nd
}

// snapshot is the Maglev Service over eps: a NodePort Service with an
// externalIP, its endpoints spread over the nodes' names.
func (l *maglevLab) snapshot(eps []netip.Addr) model.Snapshot {
	svc := service("web", []netip.Addr{maglevClusterIP}, maglevPort)
	svc.ExternalIPs = []netip.Addr{maglevExternalIP}
	svc.LoadBalancing = compile.LoadBalancingMaglev
	snap := snapshot(svc, []port{maglevPort}, eps...)
	for i := range snap.Slices[0].Endpoints {
		snap.Slices[0].Endpoints[i].NodeName = fmt.Sprintf("node-%c", 'a'+i%len(l.nodes))
	}
	return snap
}

// sync programs every node for eps.
func (l *maglevLab) sync(t *testing.T, eps []netip.Addr) {
	t.Helper()
	for _, nd := range l.nodes {
		nd.p.sync(t, l.snapshot(eps))
	}
}

// connect sends one connection from src port sport through node nd to dst
// and returns the endpoint that answered.
func (nd *maglevNode) connect(t *testing.T, sport uint16, dst netip.AddrPort) string {
	t.Helper()
	return ask(t, nd.client, lab.TCP, lab.AddrPort(maglevClient, sport), dst.String()).Name
}

// programmed reads nd's IPv4 table back from the kernel.
func (nd *maglevNode) programmed(t *testing.T) *nft.Table {
	t.Helper()
	rs, err := nd.p.k.Read()
	if err != nil {
		t.Fatal(err)
	}
	return rs[nft.IPv4]
}

// slots are the Maglev slots the programmed table holds for one entry:
// the hash its rung computes, and the endpoint address of each slot index.
type slots struct {
	hash nft.Jhash
	eps  map[uint32]string
}

// slotsOf reads the slots of the entry with key from tbl, whose pick chain
// chain must end in a jump to its hash rung's chain, chain-maglev.
func slotsOf(t *testing.T, tbl *nft.Table, chain string, key []nft.Value) slots {
	t.Helper()
	rules := tbl.Chain(chain).Rules
	if last := rules[len(rules)-1].Text(nft.IPv4); last != "jump "+chain+"-maglev" {
		t.Fatalf("chain %s ends in %s, not a jump to %s-maglev", chain, last, chain)
	}
	hashRule := tbl.Chain(chain + "-maglev").Rules[0]
	rung, ok := hashRule.Stmts[0].(nft.DNATMap)
	if !ok || !rung.Hash.Used() {
		t.Fatalf("chain %s-maglev holds %s, not a hash rung", chain, hashRule.Text(nft.IPv4))
	}
	s := tbl.Set(rung.Map)
	prefix := s.KeyText(key) + " . "
	out := slots{hash: rung.Hash, eps: map[uint32]string{}}
	for _, e := range s.Elements {
		if strings.HasPrefix(s.KeyText(e.Key), prefix) {
			out.eps[e.Key[len(e.Key)-1].Num] = e.Data[0].Addr.String()
		}
	}
	if len(out.eps) != int(rung.Hash.Mod) {
		t.Fatalf("%d slots for %s in %s, want %d", len(out.eps), prefix, rung.Map, rung.Hash.Mod)
	}
	return out
}

// predict returns the endpoint address the slots give connection p,
// computed as the kernel does: HashValue, then the slot's element.
func (s slots) predict(p trace.Packet) string { return s.eps[trace.HashValue(s.hash, p)] }

// clusterIPKey is the key of the Service's ClusterIP entry.
var clusterIPKey = []nft.Value{{Addr: maglevClusterIP}, {Num: uint32(nft.ProtoTCP)}, {Num: uint32(maglevPort.port)}}
