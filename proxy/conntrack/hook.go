package conntrack

import (
	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Hook deletes stale UDP conntrack entries after each sync.
type Hook struct {
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

// AfterSync deletes the flows Stale names. Failures are logged: the next
// endpoint change tries again, and a missed entry times out on its own.
func (h *Hook) AfterSync(prev, cur *model.Snapshot, _ model.Node) {
	targets := Stale(prev, cur)
	if len(targets) == 0 {
		return
	}
	n, err := h.conn.DeleteMatching(targets)
	if err != nil {
		h.logger.Error(err, "deleting stale UDP conntrack entries failed", "deleted", n)
		return
	}
	h.logger.V(2).Info("deleted stale UDP conntrack entries", "entries", n, "targets", len(targets))
}

// Close releases the netlink connection.
func (h *Hook) Close() error { return h.conn.Close() }
