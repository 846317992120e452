package conntrack

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// ctnetlink message types (IPCTNL_MSG_CT_*), in the conntrack subsystem.
const (
	msgGet    = 1
	msgDelete = 2
)

// Conn is a ctnetlink connection to one network namespace.
type Conn struct{ c *netlink.Conn }

// Dial connects to conntrack in the network namespace nsFD refers to, or in
// the caller's when nsFD is negative.
func Dial(nsFD int) (*Conn, error) {
	cfg := &netlink.Config{}
	if nsFD >= 0 {
		cfg.NetNS = nsFD
	}
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, cfg)
	if err != nil {
		return nil, fmt.Errorf("dial ctnetlink: %w", err)
	}
	return &Conn{c: c}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// request builds the netlink header and nfgenmsg of a ctnetlink request for
// family (unix.AF_INET or AF_INET6).
func request(msgType uint16, flags netlink.HeaderFlags, family uint8, attrs []byte) netlink.Message {
	return netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_CTNETLINK<<8 | msgType), Flags: flags},
		Data:   append([]byte{family, unix.NFNETLINK_V0, 0, 0}, attrs...),
	}
}

// Flows dumps the conntrack table of one family.
func (c *Conn) Flows(family uint8) ([]Flow, error) {
	msgs, err := c.c.Execute(request(msgGet, netlink.Request|netlink.Dump, family, nil))
	if err != nil {
		return nil, fmt.Errorf("dump conntrack: %w", err)
	}
	out := make([]Flow, 0, len(msgs))
	for _, m := range msgs {
		if len(m.Data) < 4 {
			continue
		}
		f, err := decodeFlow(m.Data[4:])
		if err != nil {
			return nil, fmt.Errorf("decode conntrack entry: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// Delete deletes one flow. A flow that is already gone is no error.
func (c *Conn) Delete(f Flow) error {
	attrs, err := encodeOrig(f)
	if err != nil {
		return err
	}
	family := uint8(unix.AF_INET)
	if f.Orig.Src.Addr().Is6() {
		family = unix.AF_INET6
	}
	_, err = c.c.Execute(request(msgDelete, netlink.Request|netlink.Acknowledge, family, attrs))
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete conntrack entry %s: %w", f, err)
	}
	return nil
}

// DeleteMatching deletes every flow of either family that one of targets
// matches and returns how many it deleted.
func (c *Conn) DeleteMatching(targets []Target) (int, error) {
	n := 0
	for _, family := range families {
		m, err := c.DeleteMatchingFamily(family.af, targets)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// families are the address families flows are dumped by, with the
// EndpointSlice address type that names each.
var families = []struct {
	af   uint8
	name model.AddressType
}{{unix.AF_INET, model.IPv4}, {unix.AF_INET6, model.IPv6}}

// DeleteMatchingFamily deletes the flows of address family af (AF_INET or
// AF_INET6) that one of targets matches and returns how many it deleted.
func (c *Conn) DeleteMatchingFamily(af uint8, targets []Target) (int, error) {
	flows, err := c.Flows(af)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range flows {
		if !matchesAny(targets, f) {
			continue
		}
		if err := c.Delete(f); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func matchesAny(targets []Target, f Flow) bool {
	for _, t := range targets {
		if t.Matches(f) {
			return true
		}
	}
	return false
}
