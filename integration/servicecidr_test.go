//go:build integration

package integration

import (
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestServiceCIDRDrop: a new connection to an address inside a ServiceCIDR
// that no Service holds is dropped at the node, whoever sends it (a pod and
// the external client through the forward hook, the node itself through
// output), instead of leaking out through the node's default route; an
// address outside every ServiceCIDR still goes out; an allocated ClusterIP
// on a port its Service lacks is still refused. Two ServiceCIDRs, both
// families; adding and removing one is an element change.
//
// The node's default route leads to an upstream namespace that answers on
// every stray address, so a leak is a reply from "upstream", and the same
// requests are first sent without ServiceCIDRs to show that they leak.
func TestServiceCIDRDrop(t *testing.T) {
	c := lab.NewCluster(t, 1)
	up := addUplink(t, c)
	p := newProxy(t, c)
	pod := c.Backends[0]
	pt := port{name: "http", proto: model.TCP, port: 80, target: 8080}
	web := service("web", addrs("10.96.0.10", "fd00:96::a"), pt)
	serve(t, pt, pod, pod.IPv4)
	serve(t, pt, pod, pod.IPv6)
	kubernetes := model.ServiceCIDR{Name: "kubernetes", CIDRs: prefixes("10.96.0.0/16", "fd00:96::/108")}
	extra := model.ServiceCIDR{Name: "extra", CIDRs: prefixes("10.100.0.0/24", "fd00:100::/112")}
	inKubernetes, inExtra, outside := addrs("10.96.0.200", "fd00:96::c8"), addrs("10.100.0.7", "fd00:100::7"), addrs("10.97.0.5", "fd00:97::5")
	answerUpstream(t, c, up, append(append(append([]netip.Addr{}, inKubernetes...), inExtra...), outside...))
	snap := snapshot(web, []port{pt}, pod.IPv4, pod.IPv6)

	p.sync(t, snap)
	for _, a := range append(append([]netip.Addr{}, inKubernetes...), inExtra...) {
		leaks(t, pod.NS, pod.Name, a, "no ServiceCIDR")
	}

	snap.ServiceCIDRs = []model.ServiceCIDR{extra, kubernetes}
	elementsOnly(t, p.sync(t, snap))
	clients := []struct {
		name string
		ns   *lab.NS
	}{
		{"pod " + pod.Name, pod.NS},
		{"external client " + c.Client.Name, c.Client},
		{"the node itself " + c.Node.Name, c.Node},
	}
	for _, cl := range clients {
		for _, a := range inKubernetes {
			t.Run(cl.name+" to "+a.String(), func(t *testing.T) { dropped(t, cl.ns, cl.name, a, "kubernetes") })
		}
	}
	for _, a := range inExtra {
		t.Run("pod to "+a.String(), func(t *testing.T) { dropped(t, pod.NS, pod.Name, a, "extra") })
	}
	for _, a := range outside {
		t.Run("outside every ServiceCIDR: "+a.String(), func(t *testing.T) { leaks(t, pod.NS, pod.Name, a, "outside every ServiceCIDR") })
	}
	for _, a := range web.ClusterIPs {
		t.Run("allocated ClusterIP "+a.String(), func(t *testing.T) {
			if got := ask(t, pod.NS, lab.TCP, "", lab.AddrPort(a, 80)); got.Name != pod.Name {
				t.Errorf("answered by %s, want the endpoint %s", got.Name, pod.Name)
			}
			assertRefused(t, pod.NS, lab.TCP, lab.AddrPort(a, 81))
			t.Logf("%s -> %s: refused (allocated ClusterIP, port the Service lacks)", pod.Name, lab.AddrPort(a, 81))
		})
	}

	snap.ServiceCIDRs = []model.ServiceCIDR{kubernetes}
	elementsOnly(t, p.sync(t, snap))
	for _, a := range inExtra {
		t.Run("extra deleted: "+a.String(), func(t *testing.T) { leaks(t, pod.NS, pod.Name, a, "ServiceCIDR extra deleted") })
	}
	t.Run("kubernetes still drops", func(t *testing.T) { dropped(t, pod.NS, pod.Name, inKubernetes[0], "kubernetes") })
}

// answerUpstream makes the upstream namespace answer TCP port 80 on each
// address, as a host out there would, with routes back to the lab.
func answerUpstream(t *testing.T, c *lab.Cluster, up *lab.NS, targets []netip.Addr) {
	t.Helper()
	up.Route(t, lab.ClusterCIDRv4.String(), "100.64.0.1")
	up.Route(t, lab.ClusterCIDRv6.String(), "fd00:64::1")
	up.Route(t, netip.PrefixFrom(c.ClientIPv4, 24).Masked().String(), "100.64.0.1")
	up.Route(t, netip.PrefixFrom(c.ClientIPv6, 64).Masked().String(), "fd00:64::1")
	for _, a := range targets {
		args := []string{"ip", "addr", "add", netip.PrefixFrom(a, a.BitLen()).String(), "dev", "lo"}
		if a.Is6() {
			args = append(args, "nodad")
		}
		up.MustExec(t, args...)
		lab.ServeTCP(t, up, lab.AddrPort(a, 80), "upstream")
	}
}

// leaks wants the request from client to a answered by upstream: routed on
// out of the node.
func leaks(t *testing.T, ns *lab.NS, client string, a netip.Addr, why string) {
	t.Helper()
	if got := ask(t, ns, lab.TCP, "", lab.AddrPort(a, 80)); got.Name != "upstream" {
		t.Fatalf("%s -> %s answered by %s, want upstream", client, lab.AddrPort(a, 80), got.Name)
	}
	t.Logf("%s -> %s: answered by upstream (%s: routed out of the node)", client, lab.AddrPort(a, 80), why)
}

// dropped wants no reply at all to a request from client to a, an
// address of ServiceCIDR cidr that no Service holds.
func dropped(t *testing.T, ns *lab.NS, client string, a netip.Addr, cidr string) {
	t.Helper()
	assertNoReply(t, ns, lab.TCP, "", lab.AddrPort(a, 80))
	t.Logf("%s -> %s: no reply within %v: dropped (in ServiceCIDR %s, held by no Service)", client, lab.AddrPort(a, 80), timeout, cidr)
}

// elementsOnly wants plan to change service-cidrs elements and nothing else.
func elementsOnly(t *testing.T, plan *nft.Plan) {
	t.Helper()
	for _, op := range plan.Ops {
		if (op.Kind != nft.AddElements && op.Kind != nft.DeleteElements) || op.Name != "service-cidrs" {
			t.Fatalf("a ServiceCIDR change made %s; want service-cidrs elements only:\n%s", op, plan.Text())
		}
	}
}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}
