package conntrack

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// fakeForgetter records which remembered endpoints a hook keeps.
type fakeForgetter struct {
	remembered []netip.AddrPort
	forgot     []netip.AddrPort
	calls      int
}

func (f *fakeForgetter) ForgetAffinity(fam nft.Family, keep func(netip.AddrPort) bool) (int, error) {
	f.calls++
	n := 0
	for _, ep := range f.remembered {
		if nft.FamilyOf(ep.Addr()) == fam && !keep(ep) {
			f.forgot = append(f.forgot, ep)
			n++
		}
	}
	return n, nil
}

func withAffinity(snap *model.Snapshot) *model.Snapshot {
	snap.Services[0].AffinitySeconds = 60
	return snap
}

func TestAffinityHook(t *testing.T) {
	a, b := netip.AddrPortFrom(ep1, 5353), netip.AddrPortFrom(ep2, 5353)
	tests := []struct {
		name       string
		prev, cur  *model.Snapshot
		wantCalls  int
		wantForgot []netip.AddrPort
	}{
		{"first sync reads nothing", nil, withAffinity(dnsSnapshot(model.TCP, ep1)), 0, nil},
		{"endpoint added reads nothing", withAffinity(dnsSnapshot(model.TCP, ep1)), withAffinity(dnsSnapshot(model.TCP, ep1, ep2)), 0, nil},
		{"endpoint removed", withAffinity(dnsSnapshot(model.TCP, ep1, ep2)), withAffinity(dnsSnapshot(model.TCP, ep2)), 2, []netip.AddrPort{a}},
		{"affinity turned off forgets all", withAffinity(dnsSnapshot(model.TCP, ep1, ep2)), dnsSnapshot(model.TCP, ep1, ep2), 2, []netip.AddrPort{a, b}},
		{"Service without affinity: nothing", dnsSnapshot(model.TCP, ep1, ep2), dnsSnapshot(model.TCP, ep2), 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeForgetter{remembered: []netip.AddrPort{a, b}}
			NewAffinityHook(f, klog.Background()).AfterSync(tc.prev, tc.cur, model.Node{})
			if f.calls != tc.wantCalls {
				t.Errorf("ForgetAffinity called %d times, want %d (once per family or not at all)", f.calls, tc.wantCalls)
			}
			if diff := cmp.Diff(tc.wantForgot, f.forgot, cmp.Comparer(func(x, y netip.AddrPort) bool { return x == y })); diff != "" {
				t.Errorf("forgot (-want +got):\n%s", diff)
			}
		})
	}
}
