package kernel

import (
	"errors"
	"fmt"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// bufferSize is the socket buffer for batches and their replies. A first
// sync of 10,000 Services is tens of MiB in one sendmsg, which the default
// buffers (about 200 KiB) refuse; the FORCE options ignore wmem_max and
// rmem_max, which we may raise as root (CAP_NET_ADMIN).
const bufferSize = 512 << 20

// Kernel applies plans to the nftables of one network namespace and reads
// our tables back.
type Kernel struct {
	conn *nftables.Conn
	// batch marshals the operations of a plan other than rules into
	// captured; out holds the whole batch, which tx sends (batch.go).
	batch    *nftables.Conn
	captured *capture
	out      batchWriter
	tx       *netlink.Conn
	seq      uint32 // last netlink sequence number used on tx
	// lastBytes is the size of the last batch sent.
	lastBytes int
	// gen is the socket Generation asks on (generation.go).
	gen generationConn
	// nsFD is our own duplicate of the namespace descriptor given to Open,
	// -1 for the process's namespace: Read dials a socket of its own there.
	nsFD int
}

var (
	_ nft.Applier = (*Kernel)(nil)
	_ nft.Reader  = (*Kernel)(nil)
)

// Open connects to nftables in the network namespace nsFD refers to, or in
// the process's own namespace when nsFD is -1. The connection lasts until
// Close; no thread ever changes namespace.
func Open(nsFD int) (*Kernel, error) {
	opts := []nftables.ConnOption{nftables.AsLasting(), nftables.WithSockOptions(largeBuffers)}
	if nsFD >= 0 {
		dup, err := unix.Dup(nsFD)
		if err != nil {
			return nil, fmt.Errorf("duplicate namespace descriptor: %w", err)
		}
		nsFD = dup
		opts = append(opts, nftables.WithNetNSFd(nsFD))
	}
	conn, err := nftables.New(opts...)
	if err != nil {
		closeFD(nsFD)
		return nil, fmt.Errorf("open nftables netlink socket: %w", err)
	}
	k := &Kernel{conn: conn, nsFD: nsFD, captured: &capture{}}
	if k.batch, err = newMarshaller(k.captured); err == nil {
		k.tx, err = dialSender(k.netNS())
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open nftables netlink socket: %w", err), k.Close())
	}
	return k, nil
}

func largeBuffers(c *netlink.Conn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, bufferSize)
		if serr == nil {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bufferSize)
		}
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("set netlink socket buffers: %w", serr)
	}
	return nil
}

// Close closes the connection.
func (k *Kernel) Close() error {
	if k.tx != nil {
		k.tx.Close()
	}
	k.closeGeneration()
	closeFD(k.nsFD)
	k.nsFD = -1
	return k.conn.CloseLasting()
}

func closeFD(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// Apply sends p as one batch. The batch carries the generation it was
// planned against, so the kernel refuses it (ERESTART) if anyone committed
// in between; Apply then retries, since the plan only touches our table.
func (k *Kernel) Apply(p *nft.Plan) error {
	if p.Empty() {
		return nil
	}
	var err error
	for range 3 {
		err = k.applyOnce(p)
		if !errors.Is(err, unix.ERESTART) && !errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	return err
}

func (k *Kernel) applyOnce(p *nft.Plan) error {
	gen, err := k.Generation()
	if err != nil {
		return err
	}
	if err := k.enqueue(p.Ops); err != nil {
		k.discard()
		return err
	}
	_, _, err = k.flushBatch(gen)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOBUFS) && k.committed(gen) {
		// The batch committed; only the kernel's echo of it overflowed.
		return nil
	}
	if errors.Is(err, unix.ERESTART) || errors.Is(err, unix.EAGAIN) {
		return err
	}
	return &nft.OpError{Index: -1, Err: err}
}

// committed reports whether the transaction after generation gen was ours:
// with the generation in the batch, nobody else's can have come first.
func (k *Kernel) committed(gen uint32) bool {
	now, err := k.Generation()
	return err == nil && now == gen+1
}

// Locate finds which operation of a plan the kernel rejects, by sending
// growing prefixes of it that end in an operation sure to fail, so that
// nothing is ever committed. It costs about log2(len) transactions, so it is
// for error reports, not for the sync path.
func (k *Kernel) Locate(p *nft.Plan) (int, error) {
	lo, hi := 0, len(p.Ops) // the first failing op is in [lo, hi)
	for lo < hi {
		mid := (lo + hi) / 2
		failed, err := k.prefixFails(p.Ops[:mid+1])
		if err != nil {
			return -1, err
		}
		if failed {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == len(p.Ops) {
		return -1, nil
	}
	return lo, nil
}
