package kernel

import (
	"errors"
	"fmt"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Sending batches without echo.
//
// google/nftables sets NLM_F_ECHO on every rule it adds, to learn the
// rule's handle from the kernel's reply. We never use handles, and the echo
// is costly: on commit the kernel builds a notification carrying the whole
// rule for every rule of the batch, and the library parses every one. For
// a first sync of 130,000 rules (10,000 Services x 10 endpoints, kernel
// 6.18) that is about 1 s of kernel time and 0.2 s of ours, a third of the
// sync.
//
// So google/nftables only marshals: enqueue puts operations on k.batch, a
// connection whose "socket" (its WithTestDial hook) captures the messages
// it would send. send clears the echo flag and sends them on our own
// netlink socket. The kernel processes a batch synchronously inside
// sendmsg, so when sendmsg returns every reply is already queued; without
// echo there are none unless a message failed.

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

// flushBatch sends what enqueue put on the marshaller as one transaction,
// planned against generation gen (0: any). n is the number of operation
// messages sent; failed is the position among them of the first message
// the kernel rejected, or -1.
func (k *Kernel) flushBatch(gen uint32) (failed, n int, err error) {
	if err := k.batch.FlushWithGenID(gen); err != nil {
		k.captured.take()
		return -1, 0, fmt.Errorf("marshal batch: %w", err)
	}
	msgs := k.captured.take()
	n = len(msgs) - 2 // without batch begin and end
	for i := range msgs {
		msgs[i].Header.Flags &^= netlink.Echo
		// Our socket numbers the messages; the capture's numbers are not
		// ours.
		msgs[i].Header.Sequence, msgs[i].Header.PID = 0, 0
	}
	sent, err := k.tx.SendMessages(msgs)
	if err != nil {
		return -1, n, fmt.Errorf("send batch: %w", err)
	}
	failed, err = k.replies(sent)
	return failed, n, err
}

// discard drops whatever enqueue left on the marshaller after a failure,
// so that it never reaches a later batch.
func (k *Kernel) discard() {
	_ = k.batch.Flush() // only marshals into the capture; its error is the enqueue error already reported
	k.captured.take()
}

// replies reads what the kernel queued for the batch just sent: nothing
// when it committed, an error per rejected message otherwise.
func (k *Kernel) replies(sent []netlink.Message) (int, error) {
	failed, first := -1, error(nil)
	for {
		ready, err := readable(k.tx)
		if err != nil || !ready {
			return failed, errors.Join(first, err)
		}
		_, err = k.tx.Receive()
		var opErr *netlink.OpError
		if err == nil || first != nil {
			continue
		}
		first = err
		if errors.As(err, &opErr) {
			failed = indexOf(sent, opErr.Sequence)
		}
	}
}

// indexOf is the position of the message numbered seq among the batch's
// operations (after the batch-begin message), -1 if none.
func indexOf(sent []netlink.Message, seq uint32) int {
	for i, m := range sent {
		if m.Header.Sequence == seq && i > 0 {
			return i - 1
		}
	}
	return -1
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
