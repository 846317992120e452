//go:build integration

package agentfailure

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// Sizes at the API's limits: an EndpointSlice holds at most 1,000
// endpoints; a Service's ports have no fixed limit.
const (
	manyPorts     = 1000
	manyEndpoints = 1000
)

// TestExtremeObjects gives nftproxy objects at the API's limits next to an
// ordinary Service: a Service with 1,000 ports, an EndpointSlice with 1,000
// endpoints, a namespace, Service and port name each at its length limit,
// and an EndpointSlice nftproxy does not program (addressType FQDN). Each
// is programmed (checked in the kernel and, where a backend exists, with
// real packets); the ordinary Service keeps answering and nftproxy keeps
// running. An IPv6 address in an IPv4 slice never reaches nftproxy: the
// API server refuses it, which the test checks too.
func TestExtremeObjects(t *testing.T) {
	env := e2e.New(t, 2)
	agent := startAgent(t, env)
	b := env.Lab.Backends
	env.Create(t, e2e.Service("web", "10.96.11.10", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("web", "http", b[0].IPv4))
	e2e.Eventually(t, "web answers", env.AnsweredBy("10.96.11.10:80", 3, b[0].Name))

	createManyPorts(t, env, b[1].IPv4)
	createManyEndpoints(t, env, b[1].IPv4)
	longName := createLongNames(t, env, b[1].IPv4)
	createFQDNSlice(t, env)
	refuseIPv6InIPv4Slice(t, env)

	for _, port := range []int{20000, 20500, 20000 + manyPorts - 1} {
		addr := fmt.Sprintf("10.96.11.20:%d", port)
		e2e.Eventually(t, "many-ports answers on "+addr, env.AnsweredBy(addr, 1, b[1].Name))
	}
	e2e.Eventually(t, "many-ports has all its ports in service-ips", countElements(env.Lab, "10.96.11.20 . tcp . ", manyPorts))
	e2e.Eventually(t, "many-endpoints DNATs to all its endpoints", countDestinations(env.Lab, netip.MustParseAddr("10.96.11.30"), 80, manyEndpoints))
	e2e.Eventually(t, "the long-named Service answers", env.AnsweredBy("10.96.11.40:80", 3, b[1].Name))
	e2e.Eventually(t, "web still answers", env.AnsweredBy("10.96.11.10:80", 3, b[0].Name))
	if done, _ := agent.Exited(); done {
		t.Fatal(agent.Failure())
	}
	t.Logf("long-named Service's chain: %s", longName)
}

func createManyPorts(t *testing.T, env *e2e.Env, ep netip.Addr) {
	t.Helper()
	svc := e2e.Service("many-ports", "10.96.11.20")
	slice := e2e.Slice("many-ports", "p0", ep)
	slice.Ports = nil
	for i := range manyPorts {
		name := fmt.Sprintf("p%d", i)
		svc.Spec.Ports = append(svc.Spec.Ports, e2e.TCPPort(name, int32(20000+i), 0))
		port, proto := int32(e2e.BackendPort), corev1.ProtocolTCP
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: &name, Port: &port, Protocol: &proto})
	}
	env.Create(t, svc)
	env.Create(t, slice)
}

// createManyEndpoints makes a Service whose one slice has 1,000 endpoints;
// only ep serves, so the test reads the rules rather than sending traffic.
func createManyEndpoints(t *testing.T, env *e2e.Env, ep netip.Addr) {
	t.Helper()
	addrs := []netip.Addr{ep}
	for i := 1; i < manyEndpoints; i++ {
		addrs = append(addrs, netip.AddrFrom4([4]byte{10, 244, byte(100 + i/250), byte(1 + i%250)}))
	}
	env.Create(t, e2e.Service("many-endpoints", "10.96.11.30", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("many-endpoints", "http", addrs...))
}

// createLongNames makes a namespace and a Service whose names are 63
// characters (DNS labels) with a port name of 15 (IANA service name), and
// returns the Service's chain name.
func createLongNames(t *testing.T, env *e2e.Env, ep netip.Addr) string {
	t.Helper()
	ns, name, port := "n"+strings.Repeat("s", 62), "s"+strings.Repeat("v", 62), "p"+strings.Repeat("o", 14)
	if _, err := env.Kube.CoreV1().Namespaces().Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := e2e.Service(name, "10.96.11.40", corev1.ServicePort{Name: port, Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(e2e.BackendPort)})
	slice := e2e.Slice(name, port, ep)
	svc.Namespace, slice.Namespace = ns, ns
	if _, err := env.Kube.CoreV1().Services(ns).Create(env.Ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kube.DiscoveryV1().EndpointSlices(ns).Create(env.Ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return "service-" + ns + "/" + name + "/tcp/" + port
}

// createFQDNSlice adds an FQDN EndpointSlice to web: kube-proxy ignores
// such slices, and so must nftproxy, without disturbing web.
func createFQDNSlice(t *testing.T, env *e2e.Env) {
	t.Helper()
	s := e2e.Slice("web", "http")
	s.Name, s.AddressType = "web-fqdn", discoveryv1.AddressTypeFQDN
	ready := true
	s.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"backend.example.com"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}
	env.Create(t, s)
}

// refuseIPv6InIPv4Slice checks that the API server refuses an IPv6 address
// in an IPv4 slice, so nftproxy cannot be handed one.
func refuseIPv6InIPv4Slice(t *testing.T, env *e2e.Env) {
	t.Helper()
	s := e2e.NamedSlice("web-v6-in-v4", "web", "http", netip.MustParseAddr("fd00:10:244:1::5"))
	s.AddressType = discoveryv1.AddressTypeIPv4
	_, err := env.Kube.DiscoveryV1().EndpointSlices(e2e.Namespace).Create(env.Ctx, s, metav1.CreateOptions{})
	if err == nil {
		t.Fatal("the API server accepted an IPv6 address in an IPv4 EndpointSlice: nftproxy must then skip it; extend this test")
	}
	t.Logf("the API server refuses an IPv6 address in an IPv4 slice: %v", err)
}

// countElements checks that service-ips has want elements starting with
// prefix.
func countElements(c *lab.Cluster, prefix string, want int) func() error {
	return func() error {
		out, err := c.Node.Exec("nft", "list", "map", "ip", "kube-proxy", "service-ips")
		if err != nil {
			return err
		}
		if got := strings.Count(out, prefix); got != want {
			return fmt.Errorf("%d elements %q..., want %d", got, prefix, want)
		}
		return nil
	}
}

// countDestinations checks that new connections to addr:port are DNATed
// to want distinct endpoints.
func countDestinations(c *lab.Cluster, addr netip.Addr, port uint16, want int) func() error {
	return func() error {
		p, err := e2e.ReadProgrammed(c)
		if err != nil {
			return err
		}
		dests, err := p.Destinations(addr, port)
		if err != nil {
			return err
		}
		if len(dests) != want {
			return fmt.Errorf("%s:%d DNATs to %d addresses, want %d", addr, port, len(dests), want)
		}
		return nil
	}
}
