package nft_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// grow returns a Fake that holds the tables of 5 Services, its text, and
// the plan to 9 Services.
func grow(t *testing.T) (*nft.Fake, string, *nft.Plan) {
	f := nft.NewFake()
	before := rulesetOf(synth.Plain(5, 2))
	converge(t, f, nil, before)
	return f, f.Ruleset.CanonicalText(), nft.Diff(before, rulesetOf(synth.Plain(9, 2)))
}

func TestFakeIsAtomic(t *testing.T) {
	f, snapshot, p := grow(t)
	f.FailAt, f.FailErr = len(p.Ops)/2, errors.New("injected")
	err := f.Apply(p)
	var opErr *nft.OpError
	if !errors.As(err, &opErr) || opErr.Index != len(p.Ops)/2 {
		t.Fatalf("Apply = %v, want an OpError at %d", err, len(p.Ops)/2)
	}
	if diff := cmp.Diff(snapshot, f.Ruleset.CanonicalText()); diff != "" {
		t.Fatalf("a failed plan changed the ruleset (-before +after):\n%s", diff)
	}
	if f.Transactions != 1 {
		t.Fatalf("transactions = %d, want 1", f.Transactions)
	}
}

func TestFakeRejectsLikeTheKernel(t *testing.T) {
	rs := rulesetOf(synth.Plain(2, 2))
	tests := []struct {
		name string
		op   nft.Op
		want error
	}{
		{"rule in missing chain", nft.Op{Kind: nft.AddRule, Family: nft.IPv4, Name: "nope", Rule: &nft.Rule{}}, nft.ErrNotFound},
		{"delete chain in use", nft.Op{Kind: nft.DeleteChain, Family: nft.IPv4, Name: "services"}, nft.ErrBusy},
		{"delete missing element", nft.Op{Kind: nft.DeleteElements, Family: nft.IPv4, Name: "cluster-ips",
			Set: rs[nft.IPv4].Set("cluster-ips"), Elements: rs[nft.IPv6].Set("nodeport-ips").Elements}, nft.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := nft.NewFake()
			converge(t, f, nil, rs)
			err := f.Apply(&nft.Plan{Ops: []nft.Op{tc.op}})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Apply = %v, want %v", err, tc.want)
			}
		})
	}
}

// A plan made from another generation than the current one is refused
// whole, as the kernel refuses a batch sealed with a stale generation.
func TestFakeRefusesPlanFromOtherGeneration(t *testing.T) {
	f, snapshot, p := grow(t)
	p.Gen = f.Gen - 1
	if err := f.Apply(p); !nft.IsConflict(err) {
		t.Fatalf("Apply = %v, want a conflict", err)
	}
	if diff := cmp.Diff(snapshot, f.Ruleset.CanonicalText()); diff != "" {
		t.Fatalf("a refused plan changed the ruleset (-before +after):\n%s", diff)
	}
	p.Gen = f.Gen
	if err := f.Apply(p); err != nil {
		t.Fatalf("Apply at the current generation = %v", err)
	}
}
