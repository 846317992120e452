package kernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Dumps (readRules, readElements) run on netlink sockets of their own in the
// Kernel's namespace, and walk the attributes of each message in place.

// dump runs one nftables dump request on a socket of its own (see dumpOn).
func (k *Kernel) dump(msgType int, fam byte, attrs []netlink.Attribute, fn func(data []byte) error) error {
	conn, err := k.dialDump()
	if err != nil {
		return err
	}
	defer conn.Close()
	return dumpOn(conn, msgType, fam, attrs, fn)
}

// dialDump opens a socket for dumps, so that they never interleave with
// the lasting connection's batches, with large receive buffers (see
// dumpBuffer).
func (k *Kernel) dialDump() (*netlink.Conn, error) {
	if k.isClosed() {
		return nil, net.ErrClosed
	}
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: k.netNS(), MessageBufferSize: dumpBuffer})
	if err != nil {
		return nil, fmt.Errorf("dial netlink: %w", err)
	}
	return conn, nil
}

// dumpOn runs one dump request on conn and hands each message's payload to
// fn as its part of the dump arrives: a dump never holds all its messages
// at once.
func dumpOn(conn *netlink.Conn, msgType int, fam byte, attrs []netlink.Attribute, fn func(data []byte) error) error {
	data, err := netlink.MarshalAttributes(attrs)
	if err != nil {
		return err
	}
	_, err = conn.Send(netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | msgType),
			Flags: netlink.Request | netlink.Dump,
		},
		Data: append([]byte{fam, unix.NFNETLINK_V0, 0, 0}, data...),
	})
	if err != nil {
		return err
	}
	for m, err := range conn.ReceiveIter() {
		if err == nil && m.Header.Flags&netlink.DumpInterrupted != 0 {
			err = errInconsistentDump
		}
		if err == nil {
			err = fn(m.Data)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// errInconsistentDump is a dump that changed while it was read: a commit
// interrupted it (the kernel says so), or a set's table was resized under
// it (readElements).
var errInconsistentDump = errors.New("dump inconsistent: the kernel's objects changed while they were read")

// dumpBuffer is the receive buffer for dumps. The kernel sizes each part of
// a dump to the largest buffer the reader has used (up to 32 KiB); the
// library's default, a buffer sized to each message, keeps parts at one
// page. Every part of a dump re-walks what it dumps from the start to find
// where the previous part stopped (kernel 6.18), so fewer, larger parts
// matter: a table-wide dump of 130,000 rules took 10.5 s with one-page parts
// and 1.4 s with these (per-chain dumps, readRules, avoid the re-walk of the
// whole table altogether).
const dumpBuffer = 64 << 10

// netNS is the namespace file descriptor for netlink.Config: 0 means the
// process's own.
func (k *Kernel) netNS() int {
	if k.nsFD < 0 {
		return 0
	}
	return k.nsFD
}

// walkAttrs calls fn with the type (flags cleared) and payload of each
// netlink attribute in b, in order. Payloads alias b: fn must copy what it
// keeps (google/nftables' unmarshalling copies what it decodes).
func walkAttrs(b []byte, fn func(typ uint16, payload []byte) error) error {
	for len(b) >= nlaHeaderLen {
		size := int(binary.NativeEndian.Uint16(b))
		if size < nlaHeaderLen || size > len(b) {
			return fmt.Errorf("malformed attribute (%d bytes of %d)", size, len(b))
		}
		typ := binary.NativeEndian.Uint16(b[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if err := fn(typ, b[nlaHeaderLen:size]); err != nil {
			return err
		}
		b = b[min(len(b), (size+3)&^3):]
	}
	return nil
}

// attrString returns a string attribute without its terminating NUL.
func attrString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func newDecoder(b []byte, skip int) (*netlink.AttributeDecoder, error) {
	if len(b) < skip {
		return nil, fmt.Errorf("short message (%d bytes)", len(b))
	}
	ad, err := netlink.NewAttributeDecoder(b[skip:])
	if err != nil {
		return nil, err
	}
	ad.ByteOrder = binary.BigEndian
	return ad, nil
}
