package dataplane

import (
	"context"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

func TestExternalIgnoresOwnCommits(t *testing.T) {
	f := nft.NewFake()
	d := New(f)
	if _, moved := d.external(); moved {
		t.Fatal("external change reported before the first Sync")
	}
	snap := synth.Plain(5, 3)
	for i := range 3 {
		snap.Slices[i].Endpoints = snap.Slices[i].Endpoints[1:]
		mustSync(t, d, f, input(snap, snap.Services[i].Key()))
		if _, moved := d.external(); moved {
			t.Fatalf("sync %d: our own commit reported as an external change", i)
		}
	}
	f.Gen++
	if _, moved := d.external(); !moved {
		t.Fatal("a foreign commit was not reported")
	}
}

func TestWatchFiresOnExternalChange(t *testing.T) {
	f := nft.NewFake()
	d := New(f)
	d.poll = time.Millisecond
	snap := synth.Plain(5, 3)
	mustSync(t, d, f, input(snap))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := d.Watch(ctx)

	d.mu.Lock() // the watcher reads the fake under the same lock
	tamperings[1].fn(f.Ruleset)
	f.Gen++
	d.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not fire within 10s of an external change")
	}
	if res := mustSync(t, d, f, input(snap, []string{}...)); !res.Repaired {
		t.Fatalf("sync after Watch fired: %+v, want a repair", res)
	}
}
