//go:build integration

package failure

import (
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// namespace is the Kubernetes namespace of the Services built here.
const namespace = "failure"

// backendPort is where every lab backend serves TCP.
const backendPort = 8080

// webIP is the ClusterIP of the Service the kernel-level tests program.
var webIP = netip.MustParseAddr("10.96.7.10")

// node is the lab node's Node, as the agent would see it.
func node(c *lab.Cluster) model.Node {
	return model.Node{Name: "node-1", IPs: []netip.Addr{c.NodeIPv4, c.NodeIPv6}}
}

// options masquerades traffic from outside the lab's pod networks, as
// nftproxy with --cluster-cidr does.
func options() compile.Options {
	o := compile.DefaultOptions()
	o.LocalCIDRs = []netip.Prefix{lab.ClusterCIDRv4, lab.ClusterCIDRv6}
	return o
}

// web is a snapshot of one ClusterIP Service, web:80/TCP, with ready
// endpoints at addrs on backendPort.
func web(addrs ...netip.Addr) *model.Snapshot {
	svc := model.Service{Namespace: namespace, Name: "web", Type: model.ClusterIP, ClusterIPs: []netip.Addr{webIP},
		Ports: []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: 80}}}
	slice := model.EndpointSlice{Namespace: namespace, Name: "web-1", Service: "web", AddressType: model.IPv4,
		Ports: []model.EndpointPort{{Name: "http", Protocol: model.TCP, Port: backendPort}}}
	for _, a := range addrs {
		slice.Endpoints = append(slice.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true, NodeName: "node-1"})
	}
	return &model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{slice}}
}

// openKernel connects to nftables in ns.
func openKernel(t *testing.T, ns *lab.NS) *kernel.Kernel {
	t.Helper()
	k, err := kernel.Open(ns.FD(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

// ruleset is `nft list ruleset` in ns: the operator's view, compared byte
// for byte.
func ruleset(t *testing.T, ns *lab.NS) string {
	t.Helper()
	return ns.MustExec(t, "nft", "list", "ruleset")
}

// answeredBy sends one request from the client to addr and returns the
// name of the backend that answered.
func answeredBy(c *lab.Cluster, addr string) (string, error) {
	reply, err := c.Client.RequestTCP(addr, requestTimeout)
	if err != nil {
		return "", err
	}
	r, err := lab.ParseReply(reply)
	return r.Name, err
}

// examples is the repository's examples/ directory.
func examples(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
