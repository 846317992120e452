//go:build integration

package e2e_test

import (
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
)

const webIP = "10.96.1.10"

// TestServiceFollowsTheAPI creates, scales, updates and deletes a NodePort
// Service and its EndpointSlice through the API server, and after each step
// waits until real requests from the external client follow.
func TestServiceFollowsTheAPI(t *testing.T) {
	env := e2e.New(t, 3)
	env.StartProxy(t)
	b := env.Lab.Backends
	web := lab.AddrPort(netip.MustParseAddr(webIP), 80)
	nodePort := lab.AddrPort(env.Lab.NodeIPv4, 30080)

	env.Create(t, e2e.Service("web", webIP, e2e.TCPPort("http", 80, 30080)))
	env.Create(t, e2e.Slice("web", "http", b[0].IPv4))
	e2e.Eventually(t, "ClusterIP answered by pod 0", env.AnsweredBy(web, 5, b[0].Name))
	e2e.Eventually(t, "NodePort answered by pod 0", env.AnsweredBy(nodePort, 5, b[0].Name))

	env.Update(t, e2e.Slice("web", "http", b[0].IPv4, b[1].IPv4, b[2].IPv4))
	e2e.Eventually(t, "scaled up to 3 pods", env.AnsweredBy(web, 30, b[0].Name, b[1].Name, b[2].Name))

	env.Update(t, e2e.Slice("web", "http", b[2].IPv4))
	e2e.Eventually(t, "scaled down to pod 2", env.AnsweredBy(web, 10, b[2].Name))
	e2e.Eventually(t, "NodePort follows the scale-down", env.AnsweredBy(nodePort, 10, b[2].Name))

	env.Update(t, e2e.Service("web", webIP, e2e.TCPPort("http", 81, 30080)))
	web81 := lab.AddrPort(netip.MustParseAddr(webIP), 81)
	e2e.Eventually(t, "port changed to 81", env.AnsweredBy(web81, 5, b[2].Name))
	// kube-proxy's behaviour: a ClusterIP rejects ports its Service lacks.
	e2e.Eventually(t, "port 80 refused", env.Refused(web))

	env.DeleteSlice(t, "web-1")
	e2e.Eventually(t, "no endpoints: refused", env.Refused(web81))
	e2e.Eventually(t, "no endpoints: NodePort refused", env.Refused(nodePort))

	env.DeleteService(t, "web")
	e2e.Eventually(t, "Service deleted", env.Unserved(web81))
}

// TestServiceTypes programs a ClusterIP, a NodePort and a LoadBalancer
// Service with an ingress IP at once and reaches each on its addresses.
func TestServiceTypes(t *testing.T) {
	env := e2e.New(t, 3)
	env.StartProxy(t)
	b := env.Lab.Backends

	env.Create(t, e2e.Service("plain", "10.96.2.10", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("plain", "http", b[0].IPv4))
	env.Create(t, e2e.Service("np", "10.96.2.20", e2e.TCPPort("http", 80, 30020)))
	env.Create(t, e2e.Slice("np", "http", b[1].IPv4))
	lb := e2e.LoadBalancer(e2e.Service("lb", "10.96.2.30", e2e.TCPPort("http", 80, 30030)))
	env.Create(t, lb)
	env.SetIngress(t, lb, "192.0.2.30")
	env.Create(t, e2e.Slice("lb", "http", b[2].IPv4))

	checks := []struct{ what, addr, pod string }{
		{"ClusterIP", "10.96.2.10:80", b[0].Name},
		{"NodePort's ClusterIP", "10.96.2.20:80", b[1].Name},
		{"NodePort", lab.AddrPort(env.Lab.NodeIPv4, 30020), b[1].Name},
		{"LoadBalancer's ClusterIP", "10.96.2.30:80", b[2].Name},
		{"LoadBalancer's NodePort", lab.AddrPort(env.Lab.NodeIPv4, 30030), b[2].Name},
		{"LoadBalancer's ingress IP", "192.0.2.30:80", b[2].Name},
	}
	for _, c := range checks {
		e2e.Eventually(t, c.what+" "+c.addr, env.AnsweredBy(c.addr, 3, c.pod))
	}
}
