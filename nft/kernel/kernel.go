package kernel

import (
	"errors"
	"fmt"
	"sync"

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
	// sub is the subscription to announcements, if any (notify.go).
	subMu sync.Mutex
	sub   *subscription
}

var (
	_ nft.Applier       = (*Kernel)(nil)
	_ nft.StreamApplier = (*Kernel)(nil)
	_ nft.Reader        = (*Kernel)(nil)
	_ nft.Notifier      = (*Kernel)(nil)
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
	err := setSockopt(c, unix.SO_SNDBUFFORCE, bufferSize)
	if err == nil {
		err = setSockopt(c, unix.SO_RCVBUFFORCE, bufferSize)
	}
	return err
}

// setSockopt sets a SOL_SOCKET option of c to n.
func setSockopt(c *netlink.Conn, opt, n int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, n)
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
	if s := k.subscription(); s != nil {
		s.conn.Close() // its reader ends
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

// Apply sends p as one batch (one atomic transaction) sealed with p.Gen,
// the generation the plan was made from: the kernel refuses the batch
// (ERESTART) when anyone committed since, and Apply then returns a
// *nft.ConflictError. It never seals a plan with a generation read here:
// that would apply a plan made from an older ruleset on top of somebody
// else's commit. A plan with Gen 0 is committed whatever the generation.
func (k *Kernel) Apply(p *nft.Plan) error {
	if p.Empty() {
		return nil
	}
	muted := k.mute(p)
	var err error
	for range 3 {
		// EAGAIN asks for the batch again (the kernel was loading a module
		// it needs); the resent batch carries the same generation.
		if err = k.applyOnce(p); !errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	k.unmute(muted, p.Gen, err == nil)
	return err
}

// Cleanup deletes our tables in both families, in one transaction. It is
// the plan from unknown state to no tables: each table is added first, so
// that deleting it succeeds whether or not it exists.
func (k *Kernel) Cleanup() error {
	if err := k.Apply(nft.Diff(nil, nft.Ruleset{})); err != nil {
		return fmt.Errorf("delete tables: %w", err)
	}
	return nil
}

func (k *Kernel) applyOnce(p *nft.Plan) error {
	if err := k.enqueue(p.Ops, 0); err != nil {
		k.discard()
		return err
	}
	_, _, err := k.flushBatch(p.Gen)
	return k.outcome(p.Gen, err)
}

// ApplyStream commits s as one transaction, as Apply commits a plan. Each
// operation is encoded into the batch as s emits it, so the stream's
// operations, and their elements, are never all held at once.
func (k *Kernel) ApplyStream(s *nft.Stream) (int, error) {
	// A stream replaces our tables whole: far above muteAbove.
	muted := k.leaveGroup()
	var n int
	var err error
	for range 3 {
		// EAGAIN asks for the batch again; s emits the same operations.
		if n, err = k.applyStreamOnce(s); !errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	k.unmute(muted, s.Gen, err == nil)
	return n, err
}

func (k *Kernel) applyStreamOnce(s *nft.Stream) (int, error) {
	n := 0
	err := s.Each(func(ops []nft.Op) error {
		if err := k.enqueue(ops, n); err != nil {
			return err
		}
		n += len(ops)
		return nil
	})
	if err != nil {
		k.discard()
		return n, err
	}
	_, _, err = k.flushBatch(s.Gen)
	return n, k.outcome(s.Gen, err)
}

// outcome turns what sending a batch sealed with gen returned into Apply's
// error.
func (k *Kernel) outcome(gen uint32, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ERESTART):
		return &nft.ConflictError{Gen: gen, Err: err}
	case errors.Is(err, unix.ENOBUFS) && k.committed(gen):
		// The batch committed; only the kernel's replies overflowed.
		return nil
	case errors.Is(err, unix.EAGAIN):
		return err
	}
	return &nft.OpError{Index: -1, Err: err}
}

// committed reports whether the batch sealed with gen committed although its
// replies were lost: with the generation in the batch nobody else's commit
// can have come first, so ours is the one that made gen+1. An unsealed
// batch (gen 0) cannot be told from anyone else's, so it counts as failed.
func (k *Kernel) committed(gen uint32) bool {
	if gen == 0 {
		return false
	}
	now, err := k.Generation()
	return err == nil && now == nft.NextGeneration(gen)
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
