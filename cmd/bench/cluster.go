package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// size is one synthetic cluster: Services x endpoints per Service; with
// maglev > 0, every maglev-th Service uses Maglev (synth.Spec.MaglevEvery).
// maglevM, when not 0, is the Maglev table size (default: the compiler's).
type size struct{ services, endpoints, maglev, maglevM int }

func (s size) String() string {
	if s.maglevM > 0 {
		return fmt.Sprintf("%dx%dm%d/%d", s.services, s.endpoints, s.maglev, s.maglevM)
	}
	if s.maglev > 0 {
		return fmt.Sprintf("%dx%dm%d", s.services, s.endpoints, s.maglev)
	}
	return fmt.Sprintf("%dx%d", s.services, s.endpoints)
}

// parseSizes reads "1000x10,10000x10,10000x10m10,10000x10m10/251" (every
// 10th Service with Maglev; the last with Maglev tables of 251 slots).
func parseSizes(text string) ([]size, error) {
	var out []size
	for _, part := range strings.Split(text, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), "x")
		b, m, hasM := strings.Cut(b, "m")
		svcs, err1 := strconv.Atoi(a)
		eps, err2 := strconv.Atoi(b)
		every, slots, err3 := parseMaglev(m, hasM)
		if !ok || err1 != nil || err2 != nil || err3 != nil || svcs < 1 || eps < 1 {
			return nil, fmt.Errorf("size %q: want SERVICESxENDPOINTS[mN[/M]], e.g. 10000x10 or 10000x10m10/251", part)
		}
		out = append(out, size{svcs, eps, every, slots})
	}
	return out, nil
}

// parseMaglev reads the "N[/M]" after a size's "m": every Nth Service
// with Maglev, tables of M slots.
func parseMaglev(text string, given bool) (every, slots int, err error) {
	if !given {
		return 0, 0, nil
	}
	n, m, hasSlots := strings.Cut(text, "/")
	if every, err = strconv.Atoi(n); err == nil && every < 1 {
		err = fmt.Errorf("%d: not a positive number", every)
	}
	if err == nil && hasSlots {
		slots, err = strconv.Atoi(m)
	}
	return every, slots, err
}

// generate builds the synthetic cluster of size s with the benchmark's
// mix (docs/benchmarks.md, proxy/model/synth).
func generate(s size) *model.Snapshot {
	return synth.Cluster(synth.Spec{Services: s.services, Endpoints: s.endpoints, Mixed: true, MaglevEvery: s.maglev})
}

// changeEndpoints returns a copy of snap where the first endpoint of each
// Service index in which moved to a new address, and the keys of the
// Services changed. snap itself is not modified: callers may still hold it.
func changeEndpoints(snap *model.Snapshot, which []int, gen int) (*model.Snapshot, map[string]bool) {
	out := &model.Snapshot{Services: snap.Services, Slices: append([]model.EndpointSlice(nil), snap.Slices...)}
	changed := map[string]bool{}
	bySvc := sliceIndex(out)
	for _, i := range which {
		svc := &snap.Services[i]
		idx, ok := bySvc[svc.Key()]
		if !ok {
			continue
		}
		s := out.Slices[idx]
		s.Endpoints = append([]model.Endpoint(nil), s.Endpoints...)
		s.Endpoints[0].Addresses = []netip.Addr{synth.MovedEndpoint(gen*len(which) + len(changed))}
		out.Slices[idx] = s
		changed[svc.Key()] = true
	}
	return out, changed
}

// sliceIndex maps "namespace/service" to the index of its first slice.
func sliceIndex(snap *model.Snapshot) map[string]int {
	idx := make(map[string]int, len(snap.Services))
	for i := range snap.Slices {
		key := snap.Slices[i].Namespace + "/" + snap.Slices[i].Service
		if _, ok := idx[key]; !ok {
			idx[key] = i
		}
	}
	return idx
}

// spread returns n Service indexes evenly spread over [0, total).
func spread(n, total int) []int {
	out := make([]int, 0, n)
	for k := range n {
		out = append(out, (k*total+total/2)/n)
	}
	return out
}

func benchNodeModel(ips ...netip.Addr) model.Node {
	return model.Node{Name: synth.NodeName, IPs: ips}
}
