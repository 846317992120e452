package conntrack

import (
	"net/netip"

	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// AffinityForgetter deletes session-affinity elements: *kernel.Kernel.
type AffinityForgetter interface {
	ForgetAffinity(f nft.Family, keep func(netip.AddrPort) bool) (int, error)
}

// AffinityHook makes the session-affinity memory forget endpoints that are
// gone, after the sync that removed them, so that no client is sent back
// to one.
type AffinityHook struct {
	k      AffinityForgetter
	logger klog.Logger
}

var _ proxy.SyncHook = (*AffinityHook)(nil)

// NewAffinityHook returns a hook that deletes through k.
func NewAffinityHook(k AffinityForgetter, logger klog.Logger) *AffinityHook {
	return &AffinityHook{k: k, logger: logger}
}

// AfterSync forgets the endpoints of Services with session affinity that
// are no longer endpoints of such a Service. It reads the affinity maps
// only when some endpoint went away.
func (h *AffinityHook) AfterSync(prev, cur *model.Snapshot, _ model.Node) {
	if prev == nil {
		return
	}
	live := affinityEndpoints(cur)
	gone := false
	for ep := range affinityEndpoints(prev) {
		gone = gone || !live[ep]
	}
	if !gone {
		return
	}
	keep := func(ep netip.AddrPort) bool { return live[ep] }
	for _, f := range nft.Families {
		n, err := h.k.ForgetAffinity(f, keep)
		if err != nil {
			h.logger.Error(err, "forgetting removed endpoints in the affinity map failed", "family", f)
			continue
		}
		h.logger.V(2).Info("forgot removed endpoints in the affinity map", "family", f, "elements", n)
	}
}

// affinityEndpoints are the endpoints (ready or serving) of every Service
// with session affinity, on every port.
func affinityEndpoints(snap *model.Snapshot) map[netip.AddrPort]bool {
	withAffinity := map[string]bool{}
	for i := range snap.Services {
		if snap.Services[i].AffinitySeconds > 0 {
			withAffinity[snap.Services[i].Key()] = true
		}
	}
	out := map[netip.AddrPort]bool{}
	for _, s := range snap.Slices {
		if !withAffinity[s.Namespace+"/"+s.Service] {
			continue
		}
		for _, p := range s.Ports {
			for _, ep := range s.Endpoints {
				if len(ep.Addresses) > 0 && (ep.Ready || ep.Serving) {
					out[netip.AddrPortFrom(ep.Addresses[0], p.Port)] = true
				}
			}
		}
	}
	return out
}
