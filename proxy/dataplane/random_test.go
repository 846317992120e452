package dataplane

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestSyncRandomHistory drives a Dataplane through a random history of
// Service changes, failed transactions, external changes and resyncs, and
// checks after every successful Sync that the kernel holds exactly what a
// fresh compile of the snapshot gives.
func TestSyncRandomHistory(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			f := nft.NewFake()
			d := New(f)
			snap := synth.Plain(20, 3)
			pending := map[string]bool{}
			for step := range 120 {
				in := input(snap)
				in.Changed = pending
				switch r.IntN(10) {
				case 0: // the next transaction fails
					f.FailAt, f.FailErr = 0, errors.New("injected")
				case 1: // somebody else changes our table
					tamperings[r.IntN(len(tamperings))].fn(f.Ruleset)
					f.Gen++
				case 2:
					in.Full = true
				}
				res, err := d.Sync(in)
				failing := f.FailErr != nil
				f.FailAt, f.FailErr = -1, nil
				switch {
				case err != nil && !failing:
					t.Fatalf("step %d: sync: %v", step, err)
				case err == nil && failing && res.Ops > 0:
					t.Fatalf("step %d: sync of %d ops succeeded through a failing applier", step, res.Ops)
				case err == nil:
					mustMatch(t, f, in, step)
					pending = map[string]bool{}
				}
				for _, key := range randomChange(r, snap) {
					pending[key] = true
				}
			}
		})
	}
}

func mustMatch(t *testing.T, f *nft.Fake, in Input, step int) {
	t.Helper()
	want, _ := compile.Ruleset(in.Snapshot, in.Node, in.Options)
	if want.CanonicalText() != f.Ruleset.CanonicalText() {
		t.Fatalf("step %d: the kernel differs from a fresh compile", step)
	}
}

// randomChange changes one Service or its endpoints, adds or removes one,
// and returns the keys of the Services it touched. ClusterIPs and NodePorts
// come from small pools, so that Services collide.
func randomChange(r *rand.Rand, s *model.Snapshot) []string {
	i := r.IntN(len(s.Services))
	svc := &s.Services[i]
	key := svc.Key()
	switch r.IntN(5) {
	case 0:
		s.Slices[i].Endpoints = s.Slices[i].Endpoints[:r.IntN(len(s.Slices[i].Endpoints)+1)]
	case 1:
		svc.ClusterIPs = []netip.Addr{netip.AddrFrom4([4]byte{10, 96, 0, byte(r.IntN(25))})}
	case 2:
		svc.Ports[0].NodePort = uint16(30000 + r.IntN(25))
	case 3: // a Service goes and another comes, at the same position
		name := fmt.Sprintf("new-%d", r.Int())
		s.Services[i].Name, s.Slices[i].Service = name, name
		return []string{key, svc.Key()}
	default:
		s.Slices[i].Endpoints = append(slices.Clip(s.Slices[i].Endpoints), model.Endpoint{Ready: true,
			Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, 200, byte(i), byte(r.IntN(250))})}})
	}
	return []string{key}
}
