package dataplane

import (
	"errors"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// streamingKernel is the Fake taking streams, as nft/kernel does: it
// collects each stream into a plan and applies that, counting streams.
type streamingKernel struct {
	*nft.Fake
	streams int
	// race commits somebody else's change before the next stream lands.
	race bool
}

func (k *streamingKernel) ApplyStream(s *nft.Stream) (int, error) {
	k.streams++
	p, err := s.Plan()
	if err != nil {
		return 0, err
	}
	if k.race {
		k.race = false
		k.Gen = nft.NextGeneration(k.Gen)
	}
	return len(p.Ops), k.Fake.Apply(p)
}

// TestStreamedFullSyncs: a kernel that takes streams gets every sync from
// unknown state (the first, the one after a failure) as a stream, which
// commits what the full plan would; syncs in between stay partial plans,
// and a stream refused for a foreign commit is planned again from the
// tables.
func TestStreamedFullSyncs(t *testing.T) {
	k := &streamingKernel{Fake: nft.NewFake()}
	k.Ruleset[nft.IPv4] = kubeProxyTable()
	d := New(k)
	snap := synth.Plain(40, 3)
	res := mustSync(t, d, k.Fake, input(snap))
	if !res.Full || k.streams != 1 || res.Ops != k.LastOps {
		t.Fatalf("first sync: %+v after %d streams (last transaction %d ops), want one full stream", res, k.streams, k.LastOps)
	}
	snap.Slices[3].Endpoints = snap.Slices[3].Endpoints[1:]
	if res := mustSync(t, d, k.Fake, input(snap, "ns/svc-3")); res.Full || k.streams != 1 {
		t.Fatalf("one change: %+v after %d streams, want a partial plan", res, k.streams)
	}
	k.FailAt, k.FailErr = 0, errors.New("injected")
	snap.Slices[4].Endpoints = snap.Slices[4].Endpoints[1:]
	if _, err := d.Sync(input(snap, "ns/svc-4")); err == nil {
		t.Fatal("sync with a failing kernel succeeded")
	}
	k.FailAt, k.FailErr = -1, nil
	k.race = true
	// Planned again from the tables read back: a patch of our own table,
	// as after a refused plan.
	res = mustSync(t, d, k.Fake, input(snap))
	if k.streams != 2 || res.Replanned != 1 {
		t.Fatalf("sync after a failure, with a race: %+v after %d streams, want a stream planned again once", res, k.streams)
	}
	if res := mustSync(t, d, k.Fake, input(snap)); res.Ops != 0 {
		t.Fatalf("sync after that: %+v, want nothing to do", res)
	}
}
