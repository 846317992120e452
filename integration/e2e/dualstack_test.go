//go:build integration

package e2e_test

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// TestDualStack: with the API server dual-stack (a service range per
// family) and the Node dual-stack (an InternalIP and a pod CIDR per
// family), an IPv6-only Service, a RequireDualStack Service and NodePorts
// on the node's IPv6 address are reached with real packets from the
// external client, each on the addresses the API server allocated, and
// each family's traffic goes to the endpoints of its own family's slice.
func TestDualStack(t *testing.T) {
	env := e2e.New(t, 2)
	env.StartProxy(t)
	b := env.Lab.Backends

	single := corev1.IPFamilyPolicySingleStack
	v6 := e2e.Service("v6only", "", e2e.TCPPort("http", 80, 30060))
	v6.Spec.IPFamilyPolicy, v6.Spec.IPFamilies = &single, []corev1.IPFamily{corev1.IPv6Protocol}
	env.Create(t, v6)
	env.Create(t, e2e.NamedSlice("v6only-ipv6", "v6only", "http", b[0].IPv6))

	require := corev1.IPFamilyPolicyRequireDualStack
	dual := e2e.Service("dual", "", e2e.TCPPort("http", 80, 30061))
	dual.Spec.IPFamilyPolicy = &require
	env.Create(t, dual)
	env.Create(t, e2e.NamedSlice("dual-ipv4", "dual", "http", b[0].IPv4))
	env.Create(t, e2e.NamedSlice("dual-ipv6", "dual", "http", b[1].IPv6))

	v6IPs, dualIPs := clusterIPs(t, env, "v6only"), clusterIPs(t, env, "dual")
	if len(v6IPs) != 1 || !v6IPs[0].Is6() {
		t.Fatalf("v6only: clusterIPs %v, want one IPv6 address", v6IPs)
	}
	if len(dualIPs) != 2 || !dualIPs[0].Is4() || !dualIPs[1].Is6() {
		t.Fatalf("dual: clusterIPs %v, want IPv4 then IPv6", dualIPs)
	}
	checks := []struct{ what, addr, pod string }{
		{"IPv6-only ClusterIP", lab.AddrPort(v6IPs[0], 80), b[0].Name},
		{"IPv6-only NodePort on the node's IPv6 address", lab.AddrPort(env.Lab.NodeIPv6, 30060), b[0].Name},
		{"dual-stack ClusterIP, IPv4", lab.AddrPort(dualIPs[0], 80), b[0].Name},
		{"dual-stack ClusterIP, IPv6", lab.AddrPort(dualIPs[1], 80), b[1].Name},
		{"dual-stack NodePort, IPv4", lab.AddrPort(env.Lab.NodeIPv4, 30061), b[0].Name},
		{"dual-stack NodePort, IPv6", lab.AddrPort(env.Lab.NodeIPv6, 30061), b[1].Name},
	}
	for _, c := range checks {
		e2e.Eventually(t, c.what+" "+c.addr, env.AnsweredBy(c.addr, 3, c.pod))
		t.Logf("%s %s: answered by %s", c.what, c.addr, c.pod)
	}

	// The IPv6 endpoint moves: only the IPv6 side follows.
	env.Update(t, e2e.NamedSlice("dual-ipv6", "dual", "http", b[0].IPv6))
	e2e.Eventually(t, "dual-stack IPv6 follows its slice", env.AnsweredBy(lab.AddrPort(dualIPs[1], 80), 3, b[0].Name))
	e2e.Eventually(t, "dual-stack IPv4 unchanged", env.AnsweredBy(lab.AddrPort(dualIPs[0], 80), 3, b[0].Name))
	// A port the Service lacks is refused on either family.
	e2e.Eventually(t, "IPv6 ClusterIP, port 81 refused", env.Refused(lab.AddrPort(dualIPs[1], 81)))
}

// clusterIPs returns the ClusterIPs the API server gave Service name.
func clusterIPs(t *testing.T, env *e2e.Env, name string) []netip.Addr {
	t.Helper()
	svc, err := env.Kube.CoreV1().Services(e2e.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, s := range svc.Spec.ClusterIPs {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}
