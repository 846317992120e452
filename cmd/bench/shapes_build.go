package main

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// The candidate table shapes (docs/ruleset.md), built as nft.Ruleset values of
// one cluster. L is what the compiler writes; the others are derived from
// L's table by moving its entries and endpoints elsewhere, so that all
// share every other object (skeleton, sets):
//
//   - old: the shape before L. One chain per Service port, one rule per
//     endpoint: `numgen random mod n-i 0 ... dnat to` endpoint i, the
//     last rule without numgen; the Service's service-ips element (a
//     verdict map, as kube-proxy has it) goes to it.
//   - A: one data map, endpoints, keyed daddr . proto . dport . i (i < n)
//     and one shared chain per endpoint count, pick-n, whose one rule
//     draws `numgen random mod n`; the service-ips element goes to pick-n.
//   - L-vmap: L's endpoint maps and rungs, with each entry a service-ips
//     element going to pick-endpoint (L as first written).
//   - L: one data map per endpoint count n, endpoints-n, keyed daddr .
//     proto . dport . i, bound by the one rung of chain pick-endpoint-n,
//     which pick-endpoint jumps to; each entry an element of the plain set
//     cluster-ip-ports, which one rule sends to pick-endpoint
//     (docs/ruleset.md).

// shapeNames lists the shapes in the order they are measured.
var shapeNames = []string{"old", "A", "L-vmap", "L"}

// The compiler's names of what the derivation moves (proxy/compile).
const (
	shapeServiceIPs = "service-ips"
	shapeEntries    = "cluster-ip-ports"
	shapeEndpoints  = "endpoints" // the prefix of L's maps, A's one map
	shapePick       = "pick-endpoint"
)

// shapeCluster is n ClusterIP Services with one TCP port and k endpoints,
// and one more with k-1 (so a count k-1 is in use: a change to it finds
// its rung or chain present). Service i is synth's plain Service i.
func shapeCluster(n, k int) *model.Snapshot {
	snap := synth.Plain(n+1, k)
	for i := range snap.Services {
		snap.Services[i].Type = model.ClusterIP
		snap.Services[i].Ports[0].NodePort = 0
	}
	last := &snap.Slices[len(snap.Slices)-1]
	last.Endpoints = last.Endpoints[:k-1]
	return snap
}

// withOneMoreService returns a copy of snap with one more ClusterIP
// Service, with as many endpoints as Service i.
func withOneMoreService(snap *model.Snapshot, i int) *model.Snapshot {
	n := len(snap.Services)
	more := synth.Plain(n+1, len(snap.Slices[i].Endpoints))
	svc := more.Services[n]
	svc.Type, svc.Ports = model.ClusterIP, slices.Clone(svc.Ports)
	svc.Ports[0].NodePort = 0
	return &model.Snapshot{
		Services: append(slices.Clone(snap.Services), svc),
		Slices:   append(slices.Clone(snap.Slices), more.Slices[n]),
	}
}

// withoutService returns a copy of snap without Service i and its slice.
func withoutService(snap *model.Snapshot, i int) *model.Snapshot {
	return &model.Snapshot{Services: slices.Delete(slices.Clone(snap.Services), i, i+1),
		Slices: slices.Delete(slices.Clone(snap.Slices), i, i+1)}
}

// withService returns a copy of snap where Service i is what change makes
// of it, and its slice what sliceChange makes of its slice (when not nil).
func withService(snap *model.Snapshot, i int, change func(*model.Service), sliceChange func(*model.EndpointSlice)) *model.Snapshot {
	out := &model.Snapshot{Services: slices.Clone(snap.Services), Slices: slices.Clone(snap.Slices)}
	svc := &out.Services[i]
	svc.Ports = slices.Clone(svc.Ports)
	change(svc)
	if sliceChange != nil {
		sliceChange(&out.Slices[i])
	}
	return out
}

// withSecondPort returns a copy of snap where Service i has a second TCP
// port, https (443 -> 8443), on the same endpoints.
func withSecondPort(snap *model.Snapshot, i int) *model.Snapshot {
	https := model.ServicePort{Name: "https", Protocol: model.TCP, Port: 443}
	return withService(snap, i, func(s *model.Service) { s.Ports = append(s.Ports, https) }, func(s *model.EndpointSlice) {
		s.Ports = append(slices.Clone(s.Ports), model.EndpointPort{Name: "https", Protocol: model.TCP, Port: synth.TargetPort(https)})
	})
}

// withAffinity returns a copy of snap where Service i has ClientIP session
// affinity (kube-proxy's default timeout).
func withAffinity(snap *model.Snapshot, i int) *model.Snapshot {
	return withService(snap, i, func(s *model.Service) { s.AffinitySeconds = 10800 }, nil)
}

// asNodePort returns a copy of snap where Service i is a NodePort Service
// (shapeCluster made every Service ClusterIP).
func asNodePort(snap *model.Snapshot, i int) *model.Snapshot {
	return withService(snap, i, func(s *model.Service) {
		s.Type, s.Ports[0].NodePort = model.NodePort, synth.NodePortFirst
	}, nil)
}

// withEndpoints returns a copy of snap where Service i has the endpoints
// addrs (its slice is synth's, one slice per Service).
func withEndpoints(snap *model.Snapshot, i int, addrs []netip.Addr) *model.Snapshot {
	out := &model.Snapshot{Services: snap.Services, Slices: slices.Clone(snap.Slices)}
	s := &out.Slices[i]
	eps := make([]model.Endpoint, len(addrs))
	for j, a := range addrs {
		eps[j] = model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true}
	}
	s.Endpoints = eps
	return out
}

// buildShape returns the IPv4 ruleset of snap in shape name.
func buildShape(name string, snap *model.Snapshot) (nft.Ruleset, error) {
	rs, problems := compile.Ruleset(snap, benchNodeModel(benchNodeIP), benchOptions())
	if len(problems) > 0 {
		return nil, fmt.Errorf("compile: %v", problems[0])
	}
	t := rs[nft.IPv4]
	if name == "L" {
		return nft.Ruleset{nft.IPv4: t}, nil
	}
	lists, err := endpointLists(t)
	if err != nil {
		return nil, err
	}
	entries, svcIPs := t.Set(shapeEntries), t.Set(shapeServiceIPs)
	for _, e := range entries.Elements {
		e.Verdict = nft.GotoChain(shapePick)
		svcIPs.Elements = append(svcIPs.Elements, e)
	}
	entries.Elements = nil
	if name == "L-vmap" {
		return nft.Ruleset{nft.IPv4: t}, nil
	}
	eps := withoutListMaps(t)
	for i, e := range svcIPs.Elements {
		l, ok := lists[svcIPs.KeyText(e.Key)]
		if !ok || e.Verdict.Chain != shapePick {
			continue
		}
		if name == "old" {
			svcIPs.Elements[i].Verdict = nft.GotoChain(oldChain(t, svcIPs.KeyText(e.Key), l))
		} else {
			svcIPs.Elements[i].Verdict = nft.GotoChain(chainA(t, len(l.data)))
			eps.Elements = append(eps.Elements, elementsA(e.Key, l)...)
		}
	}
	return nft.Ruleset{nft.IPv4: t}, nil
}

// endpointList is one entry's endpoints, in index order.
type endpointList struct{ data [][]nft.Value }

// endpointLists reads L's endpoint maps back into lists by entry (the
// entry's key text): element i of endpoints-n is endpoint i of n.
func endpointLists(t *nft.Table) (map[string]*endpointList, error) {
	if t.Chain(shapePick) == nil || t.Set(shapeServiceIPs) == nil || t.Set(shapeEntries) == nil {
		return nil, fmt.Errorf("the compiled table has no chain %s, map %s or set %s: the shape changed, update bench shapes",
			shapePick, shapeServiceIPs, shapeEntries)
	}
	out := map[string]*endpointList{}
	keyOf := &nft.Set{Key: t.Set(shapeServiceIPs).Key}
	for _, eps := range listMapsOf(t) {
		for _, e := range eps.Elements {
			k := keyOf.KeyText(e.Key[:3])
			l := out[k]
			if l == nil {
				l = &endpointList{}
				out[k] = l
			}
			l.data = append(l.data, e.Data)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the compiled table has no %s-n map with elements: the shape changed, update bench shapes", shapeEndpoints)
	}
	for _, l := range out {
		slices.SortFunc(l.data, func(a, b []nft.Value) int { return a[0].Addr.Compare(b[0].Addr) })
	}
	return out, nil
}

// listMapsOf returns L's endpoint maps, endpoints-n.
func listMapsOf(t *nft.Table) []*nft.Set {
	var out []*nft.Set
	for _, s := range t.Sets {
		if strings.HasPrefix(s.Name, shapeEndpoints+"-") {
			out = append(out, s)
		}
	}
	return out
}

// withoutListMaps takes L's endpoint maps and rung chains out of t, and
// empties pick-endpoint; it returns A's one endpoint map, empty, added in
// their place (the old shape leaves it unused).
func withoutListMaps(t *nft.Table) *nft.Set {
	maps := listMapsOf(t)
	eps := *maps[0]
	eps.Name, eps.Elements = shapeEndpoints, nil
	t.Sets = slices.DeleteFunc(t.Sets, func(s *nft.Set) bool { return slices.Contains(maps, s) })
	t.Sets = append(t.Sets, &eps)
	t.Chains = slices.DeleteFunc(t.Chains, func(c *nft.Chain) bool { return strings.HasPrefix(c.Name, shapePick+"-") })
	t.Chain(shapePick).Rules = nil
	return &eps
}

// oldChain adds the entry's own chain: one numgen rule per endpoint.
func oldChain(t *nft.Table, key string, l *endpointList) string {
	// "10.96.0.5 . tcp . 80" -> "service-10-96-0-5/tcp/80"
	c := &nft.Chain{Name: "service-" + strings.NewReplacer(" . ", "/", ".", "-").Replace(key)}
	n := len(l.data)
	for i, d := range l.data {
		dnat := nft.DNAT{Proto: nft.ProtoTCP, Addr: d[0].Addr, Port: uint16(d[1].Num)}
		r := nft.Rule{Stmts: []nft.Stmt{dnat}}
		if i < n-1 {
			r.Stmts = []nft.Stmt{nft.Random{Mod: uint32(n - i), Below: 1}, dnat}
		}
		c.Rules = append(c.Rules, r)
	}
	t.Chains = append(t.Chains, c)
	return c.Name
}

// chainA returns the shared chain for lists of n endpoints, adding it
// the first time.
func chainA(t *nft.Table, n int) string {
	name := fmt.Sprintf("pick-%d", n)
	if t.Chain(name) == nil {
		t.Chains = append(t.Chains, &nft.Chain{Name: name, Rules: []nft.Rule{{Stmts: []nft.Stmt{
			nft.DNATMap{Keys: []nft.Field{nft.Daddr, nft.L4Proto, nft.Dport}, Num: nft.Numgen{Mod: uint32(n)}, Map: shapeEndpoints},
		}}}})
	}
	return name
}

// elementsA are the entry's endpoints keyed by index 0..n-1.
func elementsA(key []nft.Value, l *endpointList) []nft.Element {
	out := make([]nft.Element, len(l.data))
	for i, d := range l.data {
		out[i] = nft.Element{Key: append(slices.Clone(key), nft.Value{Num: uint32(i)}), Data: d}
	}
	return out
}
