package compile

import (
	"fmt"
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Options are the settings of the compiler that do not come from the
// cluster's objects.
type Options struct {
	// MasqueradeBit is the packet mark bit that asks for masquerading in
	// postrouting (kube-proxy's masqueradeBit, default 14).
	MasqueradeBit int
	// MasqueradeAll masquerades all traffic to Services.
	MasqueradeAll bool
	// LocalCIDRs are the sources treated as inside the cluster; traffic from
	// elsewhere to a ClusterIP is masqueraded. Empty: no such masquerading.
	LocalCIDRs []netip.Prefix
	// NodePortAddresses selects the addresses that accept NodePort traffic.
	// Empty means the node's primary address of each family.
	NodePortAddresses []netip.Prefix
	// HostAddrs are the node's local addresses that NodePortAddresses filters.
	// Empty means the addresses of the Node object.
	HostAddrs []netip.Addr
	// LoadBalancing is how the ports of a Service without the
	// nftproxy.io/load-balancing annotation pick endpoints:
	// LoadBalancingRandom (also for "") or LoadBalancingMaglev.
	LoadBalancing string
	// Maglev shapes the lookup tables of Services that use Maglev; zero
	// fields take the defaults.
	Maglev Maglev
	// DropInvalid drops forwarded packets that conntrack marks invalid,
	// as kube-proxy's iptables mode does: an out-of-window retransmit to an
	// endpoint would otherwise go on un-NATed and draw a reset from it.
	DropInvalid bool
	// DropNodePortsOnOtherAddresses drops new connections to a NodePort in
	// use on a node address that NodePortAddresses leaves out (loopback
	// included), rather than handing them to whatever listens on the host.
	DropNodePortsOnOtherAddresses bool
}

// Maglev shapes Maglev lookup tables. Every node must have the same values,
// or the nodes send a connection to different endpoints.
type Maglev struct {
	// TableSize is M, the number of slots of a Service port's table: a
	// prime, at most MaxMaglevTableSize. A change of one endpoint moves
	// close to the ideal share of connections when M is much larger than
	// the number of endpoints (M > 100 n keeps the excess near 1%).
	TableSize uint32
	// Seed seeds the connection hash; not 0 (the kernel would draw a random
	// seed per rule, different on each node).
	Seed uint32
}

// Defaults of Maglev.
const (
	DefaultMaglevTableSize = 1021
	DefaultMaglevSeed      = 0x6e667470
)

// maglev returns o.Maglev with defaults for its zero fields.
func (o Options) maglev() Maglev {
	m := o.Maglev
	if m.TableSize == 0 {
		m.TableSize = DefaultMaglevTableSize
	}
	if m.Seed == 0 {
		m.Seed = DefaultMaglevSeed
	}
	return m
}

func (o Options) loadBalancing() string {
	if o.LoadBalancing == "" {
		return LoadBalancingRandom
	}
	return o.LoadBalancing
}

// isPrime reports whether n is a prime: Maglev tables need a prime size so
// that every skip walks every slot.
func isPrime(n uint32) bool {
	if n < 2 {
		return false
	}
	for d := uint32(2); d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// DefaultMasqueradeBit is kube-proxy's default mark bit: 0x4000.
const DefaultMasqueradeBit = 14

// DefaultOptions returns Options with kube-proxy's defaults.
func DefaultOptions() Options {
	return Options{MasqueradeBit: DefaultMasqueradeBit, LoadBalancing: LoadBalancingRandom,
		Maglev: Maglev{TableSize: DefaultMaglevTableSize, Seed: DefaultMaglevSeed}}
}

// Validate reports the first setting the compiler cannot use.
func (o Options) Validate() error {
	if o.MasqueradeBit < 0 || o.MasqueradeBit > 31 {
		return fmt.Errorf("masqueradeBit: must be between 0 and 31, got %d", o.MasqueradeBit)
	}
	switch o.LoadBalancing {
	case "", LoadBalancingRandom, LoadBalancingMaglev:
	default:
		return fmt.Errorf("loadBalancing.default: unsupported value %q", o.LoadBalancing)
	}
	if m := o.maglev(); !isPrime(m.TableSize) || m.TableSize > MaxMaglevTableSize {
		return fmt.Errorf("loadBalancing.maglev.tableSize: must be a prime up to %d, got %d", MaxMaglevTableSize, m.TableSize)
	}
	return nil
}

func (o Options) masqueradeMark() uint32 { return 1 << uint(o.MasqueradeBit) }

func (o Options) localCIDRs(f nft.Family) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range o.LocalCIDRs {
		if nft.FamilyOf(p.Addr()) == f {
			out = append(out, p)
		}
	}
	return out
}

// NodePortIPs returns the addresses of both families that accept NodePort
// traffic on node: what the nodeport-ips sets hold. The health-check node
// port servers listen on the same addresses, as kube-proxy's do.
func (o Options) NodePortIPs(node model.Node) []netip.Addr {
	n := nodeInfo{name: node.Name, ips: node.IPs}
	var out []netip.Addr
	for _, f := range nft.Families {
		out = append(out, o.nodePortIPs(n, f)...)
	}
	return out
}

// nodePortIPs returns the addresses of family f that accept NodePort
// traffic. Loopback addresses never do: DNAT of traffic to 127.0.0.1 needs
// route_localnet, which opens the node's localhost services to the network.
func (o Options) nodePortIPs(node nodeInfo, f nft.Family) []netip.Addr {
	candidates := o.HostAddrs
	if len(candidates) == 0 {
		candidates = node.ips
	}
	var out []netip.Addr
	for _, a := range candidates {
		if nft.FamilyOf(a) != f || a.IsLoopback() || !o.acceptsNodePort(node, a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func (o Options) acceptsNodePort(node nodeInfo, a netip.Addr) bool {
	if len(o.NodePortAddresses) == 0 {
		return node.isPrimary(a)
	}
	for _, p := range o.NodePortAddresses {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
