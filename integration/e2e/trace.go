package e2e

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// Programmed is our tables as the node's kernel holds them, read back over
// netlink, for checks that ask where packets go rather than how the rules
// are written.
type Programmed struct {
	c      *lab.Cluster
	tables nft.Ruleset
}

// ReadProgrammed reads the node's tables; the IPv4 one must exist.
func ReadProgrammed(c *lab.Cluster) (*Programmed, error) {
	f, err := c.Node.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	k, err := kernel.Open(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	defer k.Close()
	rs, err := k.Read()
	if err != nil {
		return nil, err
	}
	if rs[nft.IPv4] == nil {
		return nil, fmt.Errorf("no table ip %s", nft.TableName)
	}
	return &Programmed{c: c, tables: rs}, nil
}

// Trace follows a new TCP connection from the lab's client to addr:port
// through the table of addr's family.
func (p *Programmed) Trace(addr netip.Addr, port uint16) ([]trace.Outcome, error) {
	client, node := p.c.ClientIPv4, p.c.NodeIPv4
	if addr.Is6() {
		client, node = p.c.ClientIPv6, p.c.NodeIPv6
	}
	t := p.tables[nft.FamilyOf(addr)]
	if t == nil {
		return nil, fmt.Errorf("no table %s %s", nft.FamilyOf(addr), nft.TableName)
	}
	return trace.Trace(t, trace.Packet{Saddr: client, Daddr: addr, Proto: nft.ProtoTCP, Dport: port},
		trace.Options{From: trace.FromNetwork, LocalAddrs: []netip.Addr{node}})
}

// Destinations returns the endpoints, sorted, a new TCP connection from
// the lab's client to addr:port is DNATed to (nil when it is not).
func (p *Programmed) Destinations(addr netip.Addr, port uint16) ([]netip.Addr, error) {
	outs, err := p.Trace(addr, port)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, o := range outs {
		if o.Verdict == trace.Accept && o.Daddr != addr && !slices.Contains(out, o.Daddr) {
			out = append(out, o.Daddr)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out, nil
}

// Verdict returns what becomes of a new TCP connection from the lab's
// client to addr:port when it has one outcome: accepted (DNATed or not),
// dropped or rejected.
func (p *Programmed) Verdict(addr netip.Addr, port uint16) (trace.Verdict, error) {
	outs, err := p.Trace(addr, port)
	if err != nil {
		return 0, err
	}
	if len(outs) != 1 {
		return 0, fmt.Errorf("%d outcomes for %s: %v", len(outs), netip.AddrPortFrom(addr, port), outs)
	}
	return outs[0].Verdict, nil
}

// ServiceCIDRs returns the prefixes of the service-cidrs set of family f.
func (p *Programmed) ServiceCIDRs(f nft.Family) []netip.Prefix {
	var out []netip.Prefix
	if t := p.tables[f]; t != nil && t.Set("service-cidrs") != nil {
		for _, e := range t.Set("service-cidrs").Elements {
			out = append(out, e.Key[0].Prefix)
		}
	}
	return out
}
