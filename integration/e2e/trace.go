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

// Programmed is our IPv4 table as the node's kernel holds it, read back
// over netlink, for checks that ask where packets go rather than how the
// rules are written.
type Programmed struct {
	c     *lab.Cluster
	table *nft.Table
}

// ReadProgrammed reads the node's IPv4 table.
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
	return &Programmed{c: c, table: rs[nft.IPv4]}, nil
}

// Destinations returns the endpoints, sorted, a new TCP connection from
// the lab's client to addr:port is DNATed to (nil when it is not).
func (p *Programmed) Destinations(addr netip.Addr, port uint16) ([]netip.Addr, error) {
	outs, err := trace.Trace(p.table, trace.Packet{Saddr: p.c.ClientIPv4, Daddr: addr, Proto: nft.ProtoTCP, Dport: port},
		trace.Options{From: trace.FromNetwork, LocalAddrs: []netip.Addr{p.c.NodeIPv4}})
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
