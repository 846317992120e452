package conntrack

import (
	"time"

	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Hook deletes stale UDP conntrack entries after each sync.
type Hook struct {
	// Observe, when set, is told for each address family how long one
	// removal of stale entries took and how many it deleted (kube-proxy's
	// conntrack reconciler metrics). Only syncs that left stale entries
	// to look for run one.
	Observe func(family model.AddressType, took time.Duration, deleted int)

	conn   *Conn
	logger klog.Logger
}

// NewHook returns a Hook working in the network namespace nsFD refers to
// (negative: the caller's).
func NewHook(nsFD int, logger klog.Logger) (*Hook, error) {
	c, err := Dial(nsFD)
	if err != nil {
		return nil, err
	}
	return &Hook{conn: c, logger: logger}, nil
}

// AfterSync deletes the flows Stale names, family by family. Failures are
// logged: the next endpoint change tries again, and a missed entry times
// out on its own.
func (h *Hook) AfterSync(prev, cur *model.Snapshot, _ model.Node) {
	targets := Stale(prev, cur)
	if len(targets) == 0 {
		return
	}
	total := 0
	for _, f := range families {
		start := time.Now()
		n, err := h.conn.DeleteMatchingFamily(f.af, targets)
		total += n
		if h.Observe != nil {
			h.Observe(f.name, time.Since(start), n)
		}
		if err != nil {
			h.logger.Error(err, "deleting stale UDP conntrack entries failed", "family", f.name, "deleted", total)
			return
		}
	}
	h.logger.V(2).Info("deleted stale UDP conntrack entries", "entries", total, "targets", len(targets))
}

// Close releases the netlink connection.
func (h *Hook) Close() error { return h.conn.Close() }
