package agent

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestServiceCIDRsWatched: the ServiceCIDRs the API server holds reach the
// data plane in every sync's snapshot; a new one, or one deleted, is a
// sync that changed no Service.
func TestServiceCIDRsWatched(t *testing.T) {
	h := newHarness(t, node(), service("web"), serviceCIDR("kubernetes", "10.96.0.0/16", "fd00:96::/108"))
	h.start()
	want := []model.ServiceCIDR{{Name: "kubernetes",
		CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:96::/108")}}}
	check := func(step string, wantChanged int) {
		t.Helper()
		in, err := h.sync()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, in.Snapshot.ServiceCIDRs, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
			t.Errorf("%s: ServiceCIDRs (-want +got):\n%s", step, diff)
		}
		if len(in.Changed) != wantChanged && !in.Full {
			t.Errorf("%s: Changed = %v, want %d Services", step, in.Changed, wantChanged)
		}
	}
	check("first sync", 1)
	ctx := t.Context()
	if _, err := h.client.NetworkingV1().ServiceCIDRs().Create(ctx, serviceCIDR("extra", "10.97.0.0/16"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append([]model.ServiceCIDR{{Name: "extra", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.97.0.0/16")}}}, want...)
	h.recordedCIDRs(len(want))
	check("a second ServiceCIDR", 0)
	if err := h.client.NetworkingV1().ServiceCIDRs().Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = want[:1]
	h.recordedCIDRs(len(want))
	check("the first one deleted", 0)
}

// recordedCIDRs waits until the handlers recorded n ServiceCIDRs. Take
// hands out no Service change here: none is pending.
func (h *harness) recordedCIDRs(n int) {
	h.t.Helper()
	h.eventually("recorded ServiceCIDRs", func() bool { return len(h.agent.tracker.Take().Snapshot.ServiceCIDRs) == n })
}
