package compile_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestCompiledUpdateConverges applies random sequences of changes through
// Tables.Update and checks after every step that (1) the partial plan is
// accepted by the atomic fake and leaves it holding exactly what a fresh
// Compile gives, and (2) the Tables's own tables and problems are
// byte-identical to the fresh Compile's.
func TestCompiledUpdateConverges(t *testing.T) {
	nodes := map[string]model.Node{
		"dual-stack node": testNode,
		"IPv4 node":       {Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("198.51.100.1")}},
	}
	for name, node := range nodes {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("%s/seed %d", name, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				g := &generator{r: r, snap: &model.Snapshot{}}
				for range 25 {
					g.addService()
				}
				checkUpdates(t, g, node, 150)
			})
		}
	}
}

func checkUpdates(t *testing.T, g *generator, node model.Node, steps int) {
	t.Helper()
	o := compile.DefaultOptions()
	c := compile.New(g.snap, node, o)
	f := nft.NewFake()
	if err := f.Apply(nft.Diff(nil, c.Ruleset())); err != nil {
		t.Fatal(err)
	}
	for step := range steps {
		changed := g.mutate()
		p := c.Update(g.snap, changed)
		if err := f.Apply(p); err != nil {
			t.Fatalf("step %d (%v): apply: %v\nplan:\n%s", step, changed, err, p.Text())
		}
		want, wantProblems := compile.Ruleset(g.snap, node, o)
		if diff := cmp.Diff(want.CanonicalText(), f.Ruleset.CanonicalText()); diff != "" {
			t.Fatalf("step %d (%v): kernel after the partial plan (-want +got):\n%s\nplan:\n%s", step, changed, diff, p.Text())
		}
		if diff := cmp.Diff(want.Text(), c.Ruleset().Text()); diff != "" {
			t.Fatalf("step %d: Tables tables (-fresh +incremental):\n%s", step, diff)
		}
		if diff := cmp.Diff(wantProblems, c.Problems()); diff != "" {
			t.Fatalf("step %d: problems (-fresh +incremental):\n%s", step, diff)
		}
		if diff := cmp.Diff(compile.New(g.snap, node, o).Status(), c.Status()); diff != "" {
			t.Fatalf("step %d: status (-fresh +incremental):\n%s", step, diff)
		}
	}
}

// generator makes random Services that often collide: ClusterIPs, external
// IPs and NodePorts come from small pools, so claims conflict.
type generator struct {
	r    *rand.Rand
	snap *model.Snapshot
	next int
}

func (g *generator) ip4() netip.Addr { return netip.AddrFrom4([4]byte{10, 96, 0, byte(g.r.IntN(40))}) }

func (g *generator) ip6() netip.Addr {
	return netip.AddrFrom16([16]byte{0xfd, 0, 0x96, 15: byte(g.r.IntN(20))})
}

func (g *generator) service(name string) model.Service {
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

func (g *generator) slice(svc model.Service, typ model.AddressType) model.EndpointSlice {
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

// features turns on, at random, the Service fields of issue 4: traffic
// policies, session affinity, load-balancer IPs with source ranges.
func (g *generator) features(svc *model.Service) {
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

// addService inserts a new Service at a random position, with its slices.
func (g *generator) addService() string {
	g.next++
	svc := g.service(fmt.Sprintf("svc-%d", g.next))
	i := g.r.IntN(len(g.snap.Services) + 1)
	g.snap.Services = slices.Insert(g.snap.Services, i, svc)
	g.setSlices(svc)
	return svc.Key()
}

func (g *generator) setSlices(svc model.Service) {
	g.snap.Slices = slices.DeleteFunc(g.snap.Slices, func(s model.EndpointSlice) bool { return s.Service == svc.Name })
	for _, typ := range []model.AddressType{model.IPv4, model.IPv6} {
		if g.r.IntN(4) > 0 {
			g.snap.Slices = append(g.snap.Slices, g.slice(svc, typ))
		}
	}
}

// mutate makes one to three random changes and returns the Services they
// touch.
func (g *generator) mutate() map[string]bool {
	changed := map[string]bool{}
	if g.r.IntN(6) == 0 {
		g.setServiceCIDRs()
	}
	for range 1 + g.r.IntN(3) {
		if len(g.snap.Services) == 0 {
			changed[g.addService()] = true
			continue
		}
		i := g.r.IntN(len(g.snap.Services))
		svc := g.snap.Services[i]
		changed[svc.Key()] = true
		switch g.r.IntN(5) {
		case 0:
			changed[g.addService()] = true
		case 1:
			g.snap.Services = slices.Delete(g.snap.Services, i, i+1)
			g.snap.Slices = slices.DeleteFunc(g.snap.Slices, func(s model.EndpointSlice) bool { return s.Service == svc.Name })
		case 2:
			next := g.service(svc.Name)
			g.snap.Services[i] = next
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
func (g *generator) setServiceCIDRs() {
	g.snap.ServiceCIDRs = nil
	for i := range g.r.IntN(5) {
		sc := model.ServiceCIDR{Name: fmt.Sprintf("cidr-%d", i)}
		for range 1 + g.r.IntN(2) {
			sc.CIDRs = append(sc.CIDRs, netip.MustParsePrefix(cidrPool[g.r.IntN(len(cidrPool))]))
		}
		g.snap.ServiceCIDRs = append(g.snap.ServiceCIDRs, sc)
	}
}

// TestCompiledUpdateOneEndpoint: a change of one Service's endpoints, an
// address or their number, is map elements only: no rule, no chain, so
// the kernel does not re-validate the table (lists.go).
func TestCompiledUpdateOneEndpoint(t *testing.T) {
	snap := synth.Plain(200, 10)
	snap.Slices[8].Endpoints = snap.Slices[8].Endpoints[1:] // a list of 9: its rung is in use
	c := compile.New(snap, testNode, compile.DefaultOptions())
	eps := &snap.Slices[7].Endpoints
	for _, change := range []struct {
		name string
		do   func()
	}{
		{"address replaced", func() { (*eps)[3].Addresses[0] = netip.MustParseAddr("10.250.0.1") }},
		{"endpoint removed (10 to 9)", func() { *eps = (*eps)[1:] }},
		{"endpoint added (9 to 10)", func() {
			*eps = append(*eps, model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr("10.250.0.2")}, Ready: true, Serving: true})
		}},
	} {
		change.do()
		p := c.Update(snap, map[string]bool{"ns/svc-7": true})
		s := p.Stats()
		if p.Full || s.RulesAdded+s.ChainsAdded+s.ChainsFlushed+s.ChainsRemoved > 0 || s.ElementsAdded == 0 {
			t.Errorf("%s: plan: full=%v, %s; want element changes only:\n%s", change.name, p.Full, s, p.Text())
		}
		if p := c.Update(snap, map[string]bool{"ns/svc-7": true}); !p.Empty() {
			t.Fatalf("%s: update without a change:\n%s", change.name, p.Text())
		}
	}
}

// TestCompiledUpdateNewLength: a list length no entry had before adds a
// rung to the pick chains (rewritten whole, ascending), and the last list
// of a length takes its rung away.
func TestCompiledUpdateNewLength(t *testing.T) {
	snap := synth.Plain(20, 3)
	c := compile.New(snap, testNode, compile.DefaultOptions())
	snap.Slices[2].Endpoints = snap.Slices[2].Endpoints[1:]
	p := c.Update(snap, map[string]bool{"ns/svc-2": true})
	rungs := func(p *nft.Plan) []string {
		var out []string
		for _, op := range p.Ops {
			if op.Kind == nft.AddRule && op.Name == "pick-endpoint" {
				out = append(out, op.Rule.Text(nft.IPv4))
			}
		}
		return out
	}
	want := []string{
		"dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 2 offset 4 map @endpoints",
		"dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 3 offset 9 map @endpoints",
	}
	if diff := cmp.Diff(want, rungs(p)); diff != "" {
		t.Errorf("rungs after a list of 2 appeared (-want +got):\n%s\nplan:\n%s", diff, p.Text())
	}
	snap.Slices[2].Endpoints = synth.Plain(20, 3).Slices[2].Endpoints
	p = c.Update(snap, map[string]bool{"ns/svc-2": true})
	if diff := cmp.Diff(want[1:], rungs(p)); diff != "" {
		t.Errorf("rungs after it went (-want +got):\n%s\nplan:\n%s", diff, p.Text())
	}
}
