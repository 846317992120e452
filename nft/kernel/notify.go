package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Announcements. After every committed transaction the kernel (6.18,
// nf_tables_commit: nft_commit_notify, then nf_tables_gen_notify) sends to
// the NFNLGRP_NFTABLES multicast group of its namespace one message per
// object the transaction added or deleted, then NFT_MSG_NEWGEN with the
// generation it produced; messages of two transactions never interleave
// (both are sent under the commit mutex). Every message's header carries
// the port ID of the socket that sent the batch, so that ours (k.tx) are
// told from everyone else's. The kernel builds the messages only while a
// socket is in the group, and drops what a full receive buffer cannot take,
// reporting ENOBUFS at the next receive, before what is still queued.
//
// google/nftables has a Monitor, which we do not use: it decodes every
// message of every table into its own types before we could skip it (our
// own transactions and a CNI's tables are most of what comes), it stops at
// the first receive error, ENOBUFS included, instead of reporting a loss
// and going on, and it cannot leave the group around our own large
// transactions (see muteAbove).

// notifyBuffer is the receive buffer of the subscription socket. A
// foreign transaction that deletes 100,000 of our map elements announces
// about 11 MB; the buffer is charged only while messages wait in it.
const notifyBuffer = 32 << 20

// muteAbove is the number of announcements above which Apply leaves the
// group for its transaction: the kernel would build, and we would receive
// and skip, one message per element. Measured at 10,000 Services x 10
// endpoints (load average 4, three runs each), a first sync (191,000
// announcements) took 1.1-1.7 s and 0.42-0.61 s of system time with no
// socket in the group, 1.5-2.2 s and 0.81-1.22 s with one receiving: about
// 3 us an announcement. Below muteAbove they cost a few milliseconds, and
// staying in the group leaves no window in which somebody else's
// transaction could go unannounced.
const muteAbove = 1000

// subscription is the socket in the group and what its reader needs.
type subscription struct {
	conn *netlink.Conn
	own  uint32 // port ID of the Kernel's batch socket
	defs setDefs
	// ranges: the bounds of range-set elements of the transaction being
	// announced (notify_range.go).
	ranges []*rangeBounds
	// The reader blocks in a receive; a read deadline in the past wakes
	// it, to report a loss Apply found (lost) or to end (closing).
	mu      sync.Mutex
	lost    bool
	closing bool
	done    chan struct{} // closed when the subscription ends
}

// Subscribe implements nft.Notifier: it joins the NFNLGRP_NFTABLES group
// in the Kernel's namespace and delivers every transaction committed by
// another socket, with what it changed in our tables. One subscription at
// a time; it ends when ctx is done or the Kernel is closed.
func (k *Kernel) Subscribe(ctx context.Context) (<-chan nft.Commit, error) {
	return k.SubscribeBuffer(ctx, notifyBuffer)
}

// SubscribeBuffer is Subscribe with a receive buffer of the given size
// (the kernel doubles it): a small one shows what an overflow does.
func (k *Kernel) SubscribeBuffer(ctx context.Context, size int) (<-chan nft.Commit, error) {
	k.subMu.Lock()
	defer k.subMu.Unlock()
	if k.sub != nil {
		return nil, fmt.Errorf("subscribe: already subscribed")
	}
	conn, err := k.dialNotify(size)
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	s := &subscription{conn: conn, own: k.tx.PID(), defs: setDefs{k: k}, done: make(chan struct{})}
	k.sub = s
	out := make(chan nft.Commit, 16)
	go func() {
		select {
		case <-ctx.Done():
		case <-s.done:
			return
		}
		s.mu.Lock()
		s.closing = true
		_ = s.conn.SetReadDeadline(time.Now())
		s.mu.Unlock()
	}()
	go func() {
		defer k.endSubscription(s, out)
		s.run(ctx, out)
	}()
	return out, nil
}

func (k *Kernel) dialNotify(size int) (*netlink.Conn, error) {
	if k.isClosed() {
		return nil, os.ErrClosed
	}
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: k.netNS()})
	if err != nil {
		return nil, fmt.Errorf("dial netlink: %w", err)
	}
	err = setSockopt(conn, unix.SO_RCVBUFFORCE, size)
	if err == nil {
		err = conn.JoinGroup(unix.NFNLGRP_NFTABLES)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (k *Kernel) endSubscription(s *subscription, out chan nft.Commit) {
	k.subMu.Lock()
	defer k.subMu.Unlock()
	if k.sub == s {
		k.sub = nil
	}
	s.conn.Close()
	close(s.done)
	close(out)
}

// subscription returns the current subscription, or nil.
func (k *Kernel) subscription() *subscription {
	k.subMu.Lock()
	defer k.subMu.Unlock()
	return k.sub
}

// run receives announcements until ctx is done or the socket fails,
// grouping each transaction's changes until its NEWGEN.
func (s *subscription) run(ctx context.Context, out chan<- nft.Commit) {
	var changes []nft.Change
	for {
		msgs, err := s.conn.Receive()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, unix.ENOBUFS) {
			s.discardQueued()
		}
		if s.takeLost() || errors.Is(err, unix.ENOBUFS) {
			changes, s.ranges = nil, nil // of a transaction partly dropped
			if !send(ctx, out, nft.Commit{Lost: true}) {
				return
			}
		}
		switch {
		case err == nil, errors.Is(err, unix.ENOBUFS):
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue // woken for a loss, reported above
		default:
			return // the subscription fails; the channel closes
		}
		for _, m := range msgs {
			c, done := s.handle(m, &changes)
			if done && !send(ctx, out, c) {
				return
			}
		}
	}
}

// discardQueued drops what the socket holds. After an overflow the kernel
// (6.18, netlink_broadcast_deliver) drops every new announcement, without
// reporting it again, until the receive queue is empty; so the queue is
// emptied at once, and the loss reported after it covers all that was
// dropped: whoever reads the tables back on it reads them after all of it.
func (s *subscription) discardQueued() {
	raw, err := s.conn.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	_ = raw.Control(func(fd uintptr) {
		for {
			_, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
			if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.ENOBUFS) {
				return // EAGAIN: empty
			}
		}
	})
}

func send(ctx context.Context, out chan<- nft.Commit, c nft.Commit) bool {
	select {
	case out <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

// handle adds one message to the transaction being announced, and returns
// the transaction when the message is its NEWGEN. Our own transactions are
// skipped without decoding.
func (s *subscription) handle(m netlink.Message, changes *[]nft.Change) (nft.Commit, bool) {
	if m.Header.Type>>8 != unix.NFNL_SUBSYS_NFTABLES {
		return nft.Commit{}, false
	}
	ours := m.Header.PID == s.own
	if m.Header.Type&0xff != unix.NFT_MSG_NEWGEN {
		if !ours {
			*changes = append(*changes, s.decode(m)...)
		}
		return nft.Commit{}, false
	}
	c := nft.Commit{Changes: append(*changes, s.takeRanges()...)}
	*changes = nil
	if ours {
		return nft.Commit{}, false
	}
	gen, err := parseGeneration([]netlink.Message{m})
	if err != nil {
		return nft.Commit{Lost: true}, true
	}
	c.Gen = gen
	return c, true
}

// takeLost reports, once, a loss Apply found, and lets the next receive
// wait again.
func (s *subscription) takeLost() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	lost := s.lost
	if lost && !s.closing {
		_ = s.conn.SetReadDeadline(time.Time{})
	}
	s.lost = false
	return lost
}

// markLost makes the reader report a loss now, waking it from its receive.
func (s *subscription) markLost() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = true
	_ = s.conn.SetReadDeadline(time.Now())
}

// announcements counts the messages the kernel would send for p: one per
// element, rule, chain, set and table; a plan that replaces a table also
// announces the deletion of everything the old table held.
func announcements(p *nft.Plan) int {
	if p.Full {
		return muteAbove + 1
	}
	n := 0
	for _, op := range p.Ops {
		n++
		if op.Kind == nft.AddElements || op.Kind == nft.DeleteElements {
			n += len(op.Elements) - 1
		}
	}
	return n
}

// mute leaves the group before a large transaction of ours, when
// subscribed; unmute must follow.
func (k *Kernel) mute(p *nft.Plan) *subscription {
	if announcements(p) <= muteAbove {
		return nil
	}
	return k.leaveGroup()
}

// leaveGroup leaves the group before a transaction of ours, when
// subscribed, and returns the subscription for unmute.
func (k *Kernel) leaveGroup() *subscription {
	s := k.subscription()
	if s == nil {
		return nil
	}
	if err := s.conn.LeaveGroup(unix.NFNLGRP_NFTABLES); err != nil {
		return nil // stay in the group: our messages are skipped, only slower
	}
	return s
}

// unmute joins the group again after our transaction planned at gen, and
// reports a loss unless the ruleset is exactly where our transaction left
// it: a transaction of somebody else's between our leaving and joining
// was not announced to us. The kernel moves the generation before it
// announces, so reading it after joining misses nothing. An unsealed
// plan (gen 0) leaves no way to tell, so it reports a loss.
func (k *Kernel) unmute(s *subscription, gen uint32, committed bool) {
	if s == nil {
		return
	}
	want := gen
	if committed {
		want = nft.NextGeneration(gen)
	}
	err := s.conn.JoinGroup(unix.NFNLGRP_NFTABLES)
	now, gerr := k.Generation()
	if err != nil || gerr != nil || gen == 0 || now != want {
		s.markLost()
	}
	if err != nil {
		s.conn.Close() // deaf from now on: end the subscription
	}
}
