package kernel

import (
	"errors"
	"fmt"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// How a plan reaches the kernel.
//
// google/nftables sets NLM_F_ECHO on every rule it adds, to learn the
// rule's handle from the kernel's reply. We never use handles, and the echo
// is costly: on commit the kernel builds a notification carrying the whole
// rule for every rule of the batch, and the library parses every one. For
// a first sync of 130,000 rules (10,000 Services x 10 endpoints, kernel
// 6.18) that is about 1 s of kernel time and 0.2 s of ours, a third of the
// sync. The library also builds each rule message by repeated appends and
// the whole batch into one buffer for sendmsg, grown by doubling: about
// 0.7 GB allocated, and 300 MB of peak memory, for that sync.
//
// So rule messages are written by our own batchWriter (message.go),
// straight into the batch, without echo. Everything else is still
// marshalled by google/nftables, on k.batch, a connection whose "socket"
// (its WithTestDial hook) captures the messages instead of sending them;
// they are copied into the batch, echo cleared, in plan order. What we take
// from the library is the framing of one Flush: a batch-begin message, the
// operations, a batch-end message; drain checks it, and a test fails if a
// release changes it (TestMarshallerFraming). The batch goes out in one sendmsg from 1 MiB
// chunks. The kernel processes a batch synchronously inside sendmsg, so
// when sendmsg returns every reply is already queued: without echo, there
// are none unless a message failed.

// capture is the marshalling connection's socket: it keeps the messages of
// the last flush and answers nothing.
type capture struct {
	msgs []netlink.Message
}

func (c *capture) dial(req []netlink.Message) ([]netlink.Message, error) {
	c.msgs = append(c.msgs, req...)
	return nil, nil
}

// take returns the captured messages and forgets them.
func (c *capture) take() []netlink.Message {
	m := c.msgs
	c.msgs = nil
	return m
}

func newMarshaller(c *capture) (*nftables.Conn, error) {
	return nftables.New(nftables.WithTestDial(c.dial))
}

// dialSender opens the socket batches are sent on, in the namespace of
// netNS (0: ours), with buffers large enough for a first sync.
func dialSender(netNS int) (*netlink.Conn, error) {
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: netNS})
	if err != nil {
		return nil, fmt.Errorf("dial netlink: %w", err)
	}
	if err := largeBuffers(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// drain moves what google/nftables has marshalled so far into the batch,
// without its batch-begin and -end messages.
func (k *Kernel) drain() error {
	if err := k.batch.Flush(); err != nil {
		k.captured.take()
		return fmt.Errorf("marshal: %w", err)
	}
	msgs := k.captured.take()
	if len(msgs) == 0 {
		return nil // nothing was buffered: Flush sends nothing
	}
	if err := checkFraming(msgs); err != nil {
		return fmt.Errorf("marshal: %w", err)
	}
	for i := 1; i < len(msgs)-1; i++ {
		k.out.message(uint16(msgs[i].Header.Type), uint16(msgs[i].Header.Flags&^netlink.Echo), msgs[i].Data)
	}
	return nil
}

// checkFraming checks that the messages of one library Flush are a batch:
// begin, nftables operations, end.
func checkFraming(msgs []netlink.Message) error {
	last := len(msgs) - 1
	if last < 1 || msgs[0].Header.Type != unix.NFNL_MSG_BATCH_BEGIN || msgs[last].Header.Type != unix.NFNL_MSG_BATCH_END {
		return fmt.Errorf("google/nftables flushed %d messages not framed by batch begin and end", len(msgs))
	}
	for _, m := range msgs[1:last] {
		if m.Header.Type>>8 != unix.NFNL_SUBSYS_NFTABLES {
			return fmt.Errorf("google/nftables flushed message type %#x inside a batch", m.Header.Type)
		}
	}
	return nil
}

// discard drops a batch that enqueue could not finish, so that none of it
// reaches a later batch.
func (k *Kernel) discard() {
	_ = k.batch.Flush() // marshals into the capture only; the error is the one enqueue reports
	k.captured.take()
	k.out.reset()
}

// flushBatch sends the batch as one transaction, planned against
// generation gen (0: any). n is the number of operation messages sent;
// failed is the position among them of the first message the kernel
// rejected, or -1.
func (k *Kernel) flushBatch(gen uint32) (failed, n int, err error) {
	defer k.out.reset()
	if err := k.drain(); err != nil {
		return -1, 0, err
	}
	n = k.out.count
	bufs, first := k.out.seal(gen, k.nextSeq(n+2))
	k.lastBytes = 0
	for _, b := range bufs {
		k.lastBytes += len(b)
	}
	if err := sendBuffers(k.tx, bufs); err != nil {
		return -1, n, fmt.Errorf("send batch: %w", err)
	}
	failed, err = k.replies()
	if failed >= 0 {
		failed = int(uint32(failed)-first) - 1 // sequence number to position after batch-begin
	}
	return failed, n, err
}

// LastBatchBytes is the size of the last batch sent, in bytes: what one
// transaction moves over netlink, for figures and metrics.
func (k *Kernel) LastBatchBytes() int { return k.lastBytes }

// nextSeq reserves n sequence numbers and returns the first.
func (k *Kernel) nextSeq(n int) uint32 {
	first := k.seq + 1
	k.seq += uint32(n)
	return first
}

// sendBuffers sends bufs in one sendmsg: one netlink datagram, which the
// kernel handles as one batch.
func sendBuffers(c *netlink.Conn, bufs [][]byte) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Write(func(fd uintptr) bool {
		_, serr = unix.SendmsgBuffers(int(fd), bufs, nil, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}, 0)
		return !errors.Is(serr, unix.EAGAIN)
	})
	if err != nil {
		return err
	}
	return serr
}

// replies reads what the kernel queued for the batch just sent: nothing
// when it committed, an error per rejected message otherwise. seq is the
// sequence number of the first rejected message, -1 if none.
func (k *Kernel) replies() (seq int, err error) {
	seq = -1
	var first error
	for {
		ready, err := readable(k.tx)
		if err != nil || !ready {
			return seq, errors.Join(first, err)
		}
		_, err = k.tx.Receive()
		if err == nil || first != nil {
			continue
		}
		first = err
		var opErr *netlink.OpError
		if errors.As(err, &opErr) && opErr.Sequence != 0 {
			seq = int(opErr.Sequence)
		}
	}
}

// readable polls the socket without waiting.
func readable(c *netlink.Conn) (bool, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return false, err
	}
	var n int
	var perr error
	err = raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, perr = unix.Poll(fds, 0)
			if !errors.Is(perr, unix.EINTR) {
				return
			}
		}
	})
	if err == nil {
		err = perr
	}
	return n > 0, err
}
