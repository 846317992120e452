package synth

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Random makes random changes to a snapshot, for tests that check an
// incremental path (the compiler's updates, the data plane's syncs, the
// tracker's patched snapshots) against a fresh one. Its Services often
// collide: ClusterIPs, external IPs and NodePorts come from small pools, so
// claims conflict; they use every Service feature, both families and
// ServiceCIDRs. Unlike Cluster it never changes a value it handed out: a
// change replaces the Service or its EndpointSlices, so a test may keep
// the values of an earlier Snap.
type Random struct {
	Snap *model.Snapshot
	r    *rand.Rand
	next int
}

// Seeds runs fn as a subtest "seed N" for each of n seeds, with a random
// source of that seed: the tests of incremental paths run their random
// histories the same way, and a failing seed is run again alone with
// -run 'Test/seed_N'.
func Seeds(t *testing.T, n int, fn func(t *testing.T, r *rand.Rand)) {
	t.Helper()
	for seed := range uint64(n) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			fn(t, rand.New(rand.NewPCG(seed, 11)))
		})
	}
}

// NewRandom returns a Random that draws from r, over a snapshot of n
// random Services.
func NewRandom(r *rand.Rand, n int) *Random {
	g := &Random{Snap: &model.Snapshot{}, r: r}
	for range n {
		g.AddService()
	}
	return g
}

// Histories runs fn as a subtest for each of n seeds (see Seeds), with a
// Random over a snapshot of services random Services: the start of every
// test of an incremental path.
func Histories(t *testing.T, n, services int, fn func(t *testing.T, g *Random)) {
	t.Helper()
	Seeds(t, n, func(t *testing.T, r *rand.Rand) { fn(t, NewRandom(r, services)) })
}

// IntN draws from the Random's source, for a test's own choices in the
// history it makes: one source, so one seed replays the whole history.
func (g *Random) IntN(n int) int { return g.r.IntN(n) }

func (g *Random) ip4() netip.Addr { return netip.AddrFrom4([4]byte{10, 96, 0, byte(g.r.IntN(40))}) }

func (g *Random) ip6() netip.Addr {
	return netip.AddrFrom16([16]byte{0xfd, 0, 0x96, 15: byte(g.r.IntN(20))})
}

func (g *Random) service(name string) model.Service {
	svc := model.Service{Namespace: "ns", Name: name, Type: model.ClusterIP}
	switch g.r.IntN(4) {
	case 0:
		svc.ClusterIPs = []netip.Addr{g.ip6()}
	case 1:
		svc.ClusterIPs = []netip.Addr{g.ip4(), g.ip6()}
	default:
		svc.ClusterIPs = []netip.Addr{g.ip4()}
	}
	if g.r.IntN(4) == 0 {
		svc.ExternalIPs = []netip.Addr{g.ip4()}
	}
	g.features(&svc)
	for i := range 1 + g.r.IntN(2) {
		p := model.ServicePort{Name: fmt.Sprintf("p%d", i), Protocol: []model.Protocol{model.TCP, model.UDP}[g.r.IntN(2)], Port: uint16(80 + g.r.IntN(3))}
		if g.r.IntN(3) == 0 {
			svc.Type = model.NodePort
			p.NodePort = uint16(30000 + g.r.IntN(15))
		}
		svc.Ports = append(svc.Ports, p)
	}
	return svc
}

func (g *Random) slice(svc model.Service, typ model.AddressType) model.EndpointSlice {
	sl := model.EndpointSlice{Namespace: svc.Namespace, Name: svc.Name + "-" + string(typ), Service: svc.Name, AddressType: typ}
	for _, p := range svc.Ports {
		sl.Ports = append(sl.Ports, model.EndpointPort{Name: p.Name, Protocol: p.Protocol, Port: 8080})
	}
	for range g.r.IntN(5) {
		a := netip.AddrFrom4([4]byte{10, 244, 0, byte(g.r.IntN(30))})
		if typ == model.IPv6 {
			a = netip.AddrFrom16([16]byte{0xfd, 0, 0x10, 15: byte(g.r.IntN(30))})
		}
		ready := g.r.IntN(5) > 0
		sl.Endpoints = append(sl.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: ready,
			Serving: ready || g.r.IntN(2) == 0, Terminating: !ready && g.r.IntN(2) == 0,
			NodeName: []string{"node-1", "node-2", ""}[g.r.IntN(3)]})
	}
	return sl
}

// features turns on, at random, traffic policies, session affinity, and
// load-balancer IPs with source ranges.
func (g *Random) features(svc *model.Service) {
	svc.ExternalLocal = g.r.IntN(4) == 0
	svc.InternalLocal = g.r.IntN(6) == 0
	if g.r.IntN(4) == 0 {
		svc.AffinitySeconds = 10800
	}
	if g.r.IntN(5) == 0 {
		svc.Type = model.LoadBalancer
		svc.LoadBalancerIPs = []netip.Addr{netip.AddrFrom4([4]byte{192, 0, 2, byte(g.r.IntN(10))})}
		if g.r.IntN(2) == 0 {
			svc.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}
		}
	}
}

// AddService inserts a new Service at a random position, with its slices,
// and returns its key.
func (g *Random) AddService() string {
	g.next++
	svc := g.service(fmt.Sprintf("svc-%d", g.next))
	i := g.r.IntN(len(g.Snap.Services) + 1)
	g.Snap.Services = slices.Insert(g.Snap.Services, i, svc)
	g.setSlices(svc)
	return svc.Key()
}

func (g *Random) setSlices(svc model.Service) {
	g.Snap.Slices = slices.DeleteFunc(g.Snap.Slices, func(s model.EndpointSlice) bool { return s.Service == svc.Name })
	for _, typ := range []model.AddressType{model.IPv4, model.IPv6} {
		if g.r.IntN(4) > 0 {
			g.Snap.Slices = append(g.Snap.Slices, g.slice(svc, typ))
		}
	}
}

// Mutate makes one to three random changes and returns the Services they
// touch: a Service added, removed or replaced, its EndpointSlices
// replaced; and, now and then, the ServiceCIDRs replaced.
func (g *Random) Mutate() map[string]bool {
	changed := map[string]bool{}
	if g.r.IntN(6) == 0 {
		g.setServiceCIDRs()
	}
	for range 1 + g.r.IntN(3) {
		if len(g.Snap.Services) == 0 {
			changed[g.AddService()] = true
			continue
		}
		i := g.r.IntN(len(g.Snap.Services))
		svc := g.Snap.Services[i]
		changed[svc.Key()] = true
		switch g.r.IntN(5) {
		case 0:
			changed[g.AddService()] = true
		case 1:
			g.Snap.Services = slices.Delete(g.Snap.Services, i, i+1)
			g.Snap.Slices = slices.DeleteFunc(g.Snap.Slices, func(s model.EndpointSlice) bool { return s.Service == svc.Name })
		case 2:
			next := g.service(svc.Name)
			g.Snap.Services[i] = next
		default:
			g.setSlices(svc)
		}
	}
	return changed
}

// cidrPool holds ServiceCIDR ranges that nest (10.96.0.0/12 holds the
// /16s), touch (10.96 and 10.97) or stand apart, in both families.
var cidrPool = []string{"10.96.0.0/16", "10.97.0.0/16", "10.96.0.0/12", "192.168.0.0/24", "fd00:96::/108", "fd00:96::/64", "fd00:97::/112"}

// setServiceCIDRs replaces the ServiceCIDRs by up to four from the pool,
// one or two prefixes each, in random order: the changes of no Service.
func (g *Random) setServiceCIDRs() {
	g.Snap.ServiceCIDRs = nil
	for i := range g.r.IntN(5) {
		sc := model.ServiceCIDR{Name: fmt.Sprintf("cidr-%d", i)}
		for range 1 + g.r.IntN(2) {
			sc.CIDRs = append(sc.CIDRs, netip.MustParsePrefix(cidrPool[g.r.IntN(len(cidrPool))]))
		}
		g.Snap.ServiceCIDRs = append(g.Snap.ServiceCIDRs, sc)
	}
}
