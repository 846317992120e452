package dataplane

import (
	"fmt"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// tamperings are changes somebody else makes to our table. Each changes
// it when the object it touches is there.
var tamperings = []struct {
	name string
	fn   func(rs nft.Ruleset)
}{
	{"delete the table", func(rs nft.Ruleset) { delete(rs, nft.IPv4) }},
	{"flush a chain", func(rs nft.Ruleset) {
		if c := chainOf(rs, "pick-endpoint"); c != nil {
			c.Rules = nil
		}
	}},
	{"delete a map element", func(rs nft.Ruleset) {
		if s := setOf(rs, "cluster-ip-ports"); s != nil && len(s.Elements) > 0 {
			s.Elements = s.Elements[1:]
		}
	}},
	{"add a foreign rule", func(rs nft.Ruleset) {
		if c := chainOf(rs, "services"); c != nil {
			c.Rules = append(c.Rules, nft.Rule{Stmts: []nft.Stmt{nft.Foreign{Desc: "counter"}}})
		}
	}},
	{"add a foreign chain", func(rs nft.Ruleset) {
		if t := rs[nft.IPv4]; t != nil {
			t.Chains = append(t.Chains, &nft.Chain{Name: "intruder"})
		}
	}},
}

func chainOf(rs nft.Ruleset, name string) *nft.Chain {
	if t := rs[nft.IPv4]; t != nil {
		return t.Chain(name)
	}
	return nil
}

func setOf(rs nft.Ruleset, name string) *nft.Set {
	if t := rs[nft.IPv4]; t != nil {
		return t.Set(name)
	}
	return nil
}

func TestSyncRepairsExternalChanges(t *testing.T) {
	for _, tc := range tamperings {
		for _, full := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, full=%v", tc.name, full), func(t *testing.T) {
				f := nft.NewFake()
				d := New(f)
				snap := synth.Plain(5, 3)
				mustSync(t, d, f, input(snap))
				tc.fn(f.Ruleset)
				f.Gen++ // every commit moves the generation
				in := input(snap, []string{}...)
				in.Full = full
				res := mustSync(t, d, f, in)
				if !res.Repaired || res.Ops == 0 {
					t.Fatalf("result %+v, want a repair", res)
				}
				if res = mustSync(t, d, f, input(snap)); res.Repaired || res.Ops != 0 {
					t.Fatalf("sync after the repair: %+v, want nothing to do", res)
				}
			})
		}
	}
}

// countingKernel counts reads of the tables.
type countingKernel struct {
	*nft.Fake
	reads int
}

func (k *countingKernel) Read() (nft.Ruleset, error) {
	k.reads++
	return k.Fake.Read()
}

// TestResyncReadsOnlyAfterForeignCommits: the periodic resync reads the
// tables back only when the generation says somebody else committed.
func TestResyncReadsOnlyAfterForeignCommits(t *testing.T) {
	k := &countingKernel{Fake: nft.NewFake()}
	d := New(k)
	snap := synth.Plain(5, 3)
	mustSync(t, d, k.Fake, input(snap))
	in := input(snap)
	in.Full = true
	mustSync(t, d, k.Fake, in)
	if k.reads != 0 {
		t.Fatalf("%d reads while the generation was ours, want 0", k.reads)
	}
	k.Gen++
	mustSync(t, d, k.Fake, in)
	if k.reads != 1 {
		t.Fatalf("%d reads after a foreign commit, want 1", k.reads)
	}
}

func TestResyncWithoutChangeRepairsNothing(t *testing.T) {
	f := nft.NewFake()
	d := New(f)
	snap := synth.Plain(5, 3)
	mustSync(t, d, f, input(snap))
	in := input(snap)
	in.Full = true
	if res := mustSync(t, d, f, in); res.Repaired || res.Ops != 0 {
		t.Fatalf("resync of an untouched kernel: %+v, want nothing", res)
	}
	f.Gen += 5 // somebody else's tables changed, not ours
	if res := mustSync(t, d, f, input(snap)); res.Repaired || res.Ops != 0 {
		t.Fatalf("sync after foreign commits: %+v, want nothing", res)
	}
	f.Gen++ // again, now with nothing pending, as a Watch-triggered sync
	if res := mustSync(t, d, f, input(snap, []string{}...)); res.Repaired || res.Ops != 0 {
		t.Fatalf("watch-triggered sync after a foreign commit: %+v, want nothing", res)
	}
}
