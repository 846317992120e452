package lab

import (
	"fmt"
	"net/netip"
	"testing"
)

// The cluster's pod networks: backend i gets 10.244.(i+1).0/24 and
// fd00:10:244:(i+1)::/64 (the group written with the same decimal digits).
var (
	ClusterCIDRv4 = netip.MustParsePrefix("10.244.0.0/16")
	ClusterCIDRv6 = netip.MustParsePrefix("fd00:10:244::/48")
)

// maxBackends is how many /24 pod links fit in ClusterCIDRv4.
const maxBackends = 254

// Cluster is the usual topology: Node routes between the external Client
// and the Backends, one veth link each. The proxy under test runs in Node.
type Cluster struct {
	Node   *NS
	Client *NS

	// The client link: the node is 198.51.100.1 and fd00:198:51:100::1, the
	// client .2 and ::2; the client's default routes point at the node.
	NodeIPv4, NodeIPv6     netip.Addr
	ClientIPv4, ClientIPv6 netip.Addr
	ClientIf               string // the node's interface toward the client

	Backends []*Backend
}

// Backend is a pod namespace on its own link to the node. Its namespace
// name is unique, so it serves well as the server name in replies.
type Backend struct {
	*NS
	Index      int
	IPv4, IPv6 netip.Addr // the pod's addresses
	// The node's side of the link, the pod's default gateways.
	GatewayIPv4, GatewayIPv6 netip.Addr
	NodeIf                   string // the node's interface toward the pod
}

// NewCluster builds a node with IP forwarding on, an external client, and n
// backends. Everything is removed at test cleanup.
func NewCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{
		Node:       NewNS(t, "node"),
		Client:     NewNS(t, "client"),
		NodeIPv4:   netip.MustParseAddr("198.51.100.1"),
		NodeIPv6:   netip.MustParseAddr("fd00:198:51:100::1"),
		ClientIPv4: netip.MustParseAddr("198.51.100.2"),
		ClientIPv6: netip.MustParseAddr("fd00:198:51:100::2"),
	}
	c.Node.Sysctl(t, "net.ipv4.ip_forward", "1")
	c.Node.Sysctl(t, "net.ipv6.conf.all.forwarding", "1")
	c.ClientIf, _ = Connect(t,
		c.Node, []string{prefix(c.NodeIPv4, 24), prefix(c.NodeIPv6, 64)},
		c.Client, []string{prefix(c.ClientIPv4, 24), prefix(c.ClientIPv6, 64)})
	c.Client.Route(t, "default", c.NodeIPv4.String())
	c.Client.Route(t, "default", c.NodeIPv6.String())
	for range n {
		c.AddBackend(t)
	}
	return c
}

// AddBackend adds one more backend pod, linked to the node and routed
// through it. It is not safe for concurrent use.
func (c *Cluster) AddBackend(t testing.TB) *Backend {
	t.Helper()
	i := len(c.Backends)
	if i >= maxBackends {
		t.Fatalf("add backend: at most %d backends", maxBackends)
	}
	b := &Backend{
		NS:          NewNS(t, fmt.Sprintf("pod%d", i)),
		Index:       i,
		IPv4:        netip.AddrFrom4([4]byte{10, 244, byte(i + 1), 2}),
		GatewayIPv4: netip.AddrFrom4([4]byte{10, 244, byte(i + 1), 1}),
		IPv6:        netip.MustParseAddr(fmt.Sprintf("fd00:10:244:%d::2", i+1)),
		GatewayIPv6: netip.MustParseAddr(fmt.Sprintf("fd00:10:244:%d::1", i+1)),
	}
	b.NodeIf, _ = Connect(t,
		c.Node, []string{prefix(b.GatewayIPv4, 24), prefix(b.GatewayIPv6, 64)},
		b.NS, []string{prefix(b.IPv4, 24), prefix(b.IPv6, 64)})
	b.Route(t, "default", b.GatewayIPv4.String())
	b.Route(t, "default", b.GatewayIPv6.String())
	c.Backends = append(c.Backends, b)
	return b
}

// prefix writes a in CIDR notation with the given length.
func prefix(a netip.Addr, bits int) string {
	return netip.PrefixFrom(a, bits).String()
}

// AddrPort joins an address and port as "ip:port" ("[ip]:port" for IPv6),
// the form Serve and Request take.
func AddrPort(a netip.Addr, port uint16) string {
	return netip.AddrPortFrom(a, port).String()
}
