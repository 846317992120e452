//go:build integration

package e2e_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/integration/apiserver"
	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// TestServiceCIDRs: the API server creates its default ServiceCIDR,
// "kubernetes", from --service-cluster-ip-range (both families), and
// nftproxy programs it; a second ServiceCIDR created through the API is
// added, a Service gets a ClusterIP from it and answers, the addresses of
// both that no Service holds are dropped (where the kernel's tables send a
// new connection from the client), an allocated ClusterIP on a port its
// Service lacks is refused; deleted, the second one's addresses are
// dropped no more. (Real packets to unallocated addresses: integration's
// TestServiceCIDRDrop.)
func TestServiceCIDRs(t *testing.T) {
	env := e2e.New(t, 1)
	env.StartProxy(t)
	pod := env.Lab.Backends[0]
	cidrs := env.Kube.NetworkingV1().ServiceCIDRs()

	var def *networkingv1.ServiceCIDR
	e2e.Eventually(t, "the API server's default ServiceCIDR", func() (err error) {
		def, err = cidrs.Get(env.Ctx, "kubernetes", metav1.GetOptions{})
		return err
	})
	if want := []string{apiserver.ServiceCIDR.String(), apiserver.ServiceCIDRv6.String()}; !slices.Equal(def.Spec.CIDRs, want) {
		t.Fatalf("default ServiceCIDR %v, want %v", def.Spec.CIDRs, want)
	}
	t.Logf("the API server created ServiceCIDR kubernetes %v", def.Spec.CIDRs)
	e2e.Eventually(t, "the default ServiceCIDR programmed", serviceCIDRs(env,
		[]netip.Prefix{apiserver.ServiceCIDR}, []netip.Prefix{apiserver.ServiceCIDRv6}))

	extra4, extra6 := netip.MustParsePrefix("10.100.0.0/24"), netip.MustParsePrefix("fd00:100::/112")
	extra := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{extra4.String(), extra6.String()}}}
	extra, err := cidrs.Create(env.Ctx, extra, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	markReady(t, env, extra) // the ServiceCIDR controller's part: no controller manager runs here
	e2e.Eventually(t, "the second ServiceCIDR programmed", serviceCIDRs(env,
		[]netip.Prefix{apiserver.ServiceCIDR, extra4}, []netip.Prefix{apiserver.ServiceCIDRv6, extra6}))

	inExtra := "10.100.0.10"
	env.Create(t, e2e.Service("in-extra", inExtra, e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("in-extra", "http", pod.IPv4))
	e2e.Eventually(t, "a ClusterIP from the second ServiceCIDR answers", env.AnsweredBy(inExtra+":80", 3, pod.Name))
	e2e.Eventually(t, "its port 81 refused", env.Refused(inExtra+":81"))
	for _, a := range []string{"10.96.200.1", "fd00:96::c8", "10.100.0.7", "fd00:100::7"} {
		e2e.Eventually(t, a+" dropped", verdict(env, netip.MustParseAddr(a), trace.Drop))
	}
	e2e.Eventually(t, "10.101.0.7, outside every ServiceCIDR, untouched", verdict(env, netip.MustParseAddr("10.101.0.7"), trace.Accept))

	env.DeleteService(t, "in-extra")
	if err := cidrs.Delete(env.Ctx, "extra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	release(t, env, "extra")
	e2e.Eventually(t, "the second ServiceCIDR gone", serviceCIDRs(env,
		[]netip.Prefix{apiserver.ServiceCIDR}, []netip.Prefix{apiserver.ServiceCIDRv6}))
	e2e.Eventually(t, "10.100.0.7 no longer dropped", verdict(env, netip.MustParseAddr("10.100.0.7"), trace.Accept))
	e2e.Eventually(t, "10.96.200.1 still dropped", verdict(env, netip.MustParseAddr("10.96.200.1"), trace.Drop))
}

// serviceCIDRs checks that the node's tables hold exactly these ranges.
func serviceCIDRs(env *e2e.Env, v4, v6 []netip.Prefix) func() error {
	return func() error {
		p, err := e2e.ReadProgrammed(env.Lab)
		if err != nil {
			return err
		}
		if got := p.ServiceCIDRs(nft.IPv4); !slices.Equal(got, v4) {
			return fmt.Errorf("table ip service-cidrs %v, want %v", got, v4)
		}
		if got := p.ServiceCIDRs(nft.IPv6); !slices.Equal(got, v6) {
			return fmt.Errorf("table ip6 service-cidrs %v, want %v", got, v6)
		}
		return nil
	}
}

// verdict checks what becomes of a new TCP connection from the client to
// addr:80 in the node's tables.
func verdict(env *e2e.Env, addr netip.Addr, want trace.Verdict) func() error {
	return func() error {
		p, err := e2e.ReadProgrammed(env.Lab)
		if err != nil {
			return err
		}
		got, err := p.Verdict(addr, 80)
		if err == nil && got != want {
			err = fmt.Errorf("%s: %v, want %v", lab.AddrPort(addr, 80), got, want)
		}
		return err
	}
}

// markReady sets the Ready condition the ServiceCIDR controller (in
// kube-controller-manager) would set: the API server allocates ClusterIPs
// only from ready ServiceCIDRs.
func markReady(t *testing.T, env *e2e.Env, sc *networkingv1.ServiceCIDR) {
	t.Helper()
	sc.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
		Reason: "Test", LastTransitionTime: metav1.Now()}}
	if _, err := env.Kube.NetworkingV1().ServiceCIDRs().UpdateStatus(env.Ctx, sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// release removes the finalizers of a deleted ServiceCIDR, as the
// ServiceCIDR controller does once no ClusterIP of it is allocated.
func release(t *testing.T, env *e2e.Env, name string) {
	t.Helper()
	c := env.Kube.NetworkingV1().ServiceCIDRs()
	sc, err := c.Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return // already gone: it had no finalizer
	}
	sc.Finalizers = nil
	if _, err := c.Update(env.Ctx, sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
