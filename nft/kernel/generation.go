package kernel

import (
	"fmt"
	"net"
	"sync"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// generationConn is a netlink socket of its own for reading the ruleset
// generation. Generation is polled from a goroutine of its own (the
// dataplane's Watch) while other code may use the main connection, whose
// request and reply must not interleave with anyone else's.
//
// google/nftables has Conn.GetGen, which we do not use: it fails on any
// attribute of the reply it does not know (a kernel that adds one to
// NFT_MSG_NEWGEN would stop every sync, where the generation ID is all we
// read), it formats errors with %v so that errnos cannot be told apart, and
// on a lasting connection it shares the socket with Read's requests without
// holding a lock across request and reply. TestLibraryGetGen fails when the
// first reason no longer holds.
type generationConn struct {
	mu     sync.Mutex
	conn   *netlink.Conn
	closed bool // by Close: never dial again (the namespace is gone)
}

// Generation returns the ruleset generation: it changes with every committed
// transaction, ours or anyone else's. It is safe to call concurrently with
// every other method.
func (k *Kernel) Generation() (uint32, error) {
	k.gen.mu.Lock()
	defer k.gen.mu.Unlock()
	if k.gen.closed {
		return 0, fmt.Errorf("read ruleset generation: %w", net.ErrClosed)
	}
	if k.gen.conn == nil {
		conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: k.netNS()})
		if err != nil {
			return 0, fmt.Errorf("read ruleset generation: dial netlink: %w", err)
		}
		k.gen.conn = conn
	}
	msgs, err := k.gen.conn.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETGEN), Flags: netlink.Request},
		Data:   []byte{unix.AF_UNSPEC, unix.NFNETLINK_V0, 0, 0},
	})
	if err != nil {
		return 0, fmt.Errorf("read ruleset generation: %w", err)
	}
	return parseGeneration(msgs)
}

func parseGeneration(msgs []netlink.Message) (uint32, error) {
	for _, m := range msgs {
		ad, err := newDecoder(m.Data, 4) // after struct nfgenmsg
		if err != nil {
			return 0, err
		}
		for ad.Next() {
			if ad.Type() == unix.NFTA_GEN_ID {
				return ad.Uint32(), nil
			}
		}
	}
	return 0, fmt.Errorf("read ruleset generation: no NFTA_GEN_ID in the reply")
}

func (k *Kernel) closeGeneration() {
	k.gen.mu.Lock()
	defer k.gen.mu.Unlock()
	k.gen.closed = true
	if k.gen.conn != nil {
		_ = k.gen.conn.Close()
		k.gen.conn = nil
	}
}

// isClosed reports whether Close was called: sockets of our own must not be
// dialed any more, since the namespace descriptor is gone.
func (k *Kernel) isClosed() bool {
	k.gen.mu.Lock()
	defer k.gen.mu.Unlock()
	return k.gen.closed
}
