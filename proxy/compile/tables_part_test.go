package compile_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestPartAgreesWithTable: for every element and chain of the whole
// desired table, Part finds exactly it; for keys and names the table
// lacks, Part finds nothing. Clusters with colliding claims (the random
// generator, after updates) and the benchmark's mix, with ServiceCIDRs.
func TestPartAgreesWithTable(t *testing.T) {
	synth.Histories(t, 3, 30, func(t *testing.T, g *synth.Random) {
		c := compile.New(g.Snap, testNode, compile.DefaultOptions())
		for range 40 {
			c.Update(g.Snap, g.Mutate())
		}
		checkParts(t, c)
	})
	t.Run("mix", func(t *testing.T) {
		snap := synth.Cluster(synth.Spec{Services: 300, Endpoints: 4, Mixed: true})
		snap.ServiceCIDRs = []model.ServiceCIDR{{Name: "kubernetes", CIDRs: []netip.Prefix{
			netip.MustParsePrefix("10.96.0.0/12"), netip.MustParsePrefix("fd00:10:96::/108")}}}
		checkParts(t, compile.New(snap, testNode, compile.DefaultOptions()))
	})
}

func checkParts(t *testing.T, c *compile.Tables) {
	t.Helper()
	for _, f := range nft.Families {
		whole := c.Table(f)
		if rs := c.Ruleset(); whole != nil && rs[f].Text() != sorted(whole).Text() {
			t.Errorf("%s: Table is not Ruleset's table", f)
		}
		if whole == nil {
			if c.Part(f, nil, nil) != nil {
				t.Errorf("%s: Part of a family without a table is not nil", f)
			}
			continue
		}
		for _, s := range whole.Sets {
			checkSetPart(t, c, f, s)
		}
		var names []string
		for _, ch := range whole.Chains {
			names = append(names, ch.Name)
		}
		part := c.Part(f, nil, append(names, "no-such-chain"))
		if diff := cmp.Diff(chainTexts(f, whole.Chains), chainTexts(f, part.Chains)); diff != "" {
			t.Errorf("%s: chains of Part (-table +part):\n%s", f, diff)
		}
	}
}

// checkSetPart asks Part for every key of s, and for keys next to them
// (another number in the last part: another index of an endpoint list, or
// another port), which must be found exactly when s has them. Each key is
// asked once, as a repair asks.
func checkSetPart(t *testing.T, c *compile.Tables, f nft.Family, s *nft.Set) {
	t.Helper()
	byKey := map[string]nft.Element{}
	asked := map[string]bool{}
	var keys [][]nft.Value
	ask := func(k []nft.Value) {
		if !asked[s.KeyText(k)] {
			asked[s.KeyText(k)] = true
			keys = append(keys, k)
		}
	}
	for _, e := range s.Elements {
		byKey[s.KeyText(e.Key)] = e
		ask(e.Key)
		near := append([]nft.Value(nil), e.Key...)
		near[len(near)-1].Num += 7
		ask(near)
	}
	want := &nft.Set{Name: s.Name, Key: s.Key, Data: s.Data, Map: s.Map}
	for _, k := range keys {
		if e, ok := byKey[s.KeyText(k)]; ok {
			want.Elements = append(want.Elements, e)
			delete(byKey, s.KeyText(k))
		}
	}
	want.SortElements()
	got := c.Part(f, map[string][][]nft.Value{s.Name: keys}, nil).Set(s.Name)
	got.SortElements()
	if diff := cmp.Diff(elementTexts(want), elementTexts(got)); diff != "" {
		t.Errorf("%s: elements of %s in Part (-table +part):\n%s", f, s.Name, diff)
	}
	if !s.Interval {
		return
	}
	// The kernel hands an interval element's addresses back as prefixes.
	for _, k := range keys {
		for i, v := range k {
			if v.Addr.IsValid() {
				k[i] = nft.Value{Prefix: netip.PrefixFrom(v.Addr, v.Addr.BitLen())}
			}
		}
	}
	got = c.Part(f, map[string][][]nft.Value{s.Name: keys}, nil).Set(s.Name)
	got.SortElements()
	if diff := cmp.Diff(elementTexts(want), elementTexts(got)); diff != "" {
		t.Errorf("%s: elements of %s in Part, asked as the kernel has them (-table +part):\n%s", f, s.Name, diff)
	}
}

func elementTexts(s *nft.Set) []string {
	var out []string
	for _, e := range s.Elements {
		out = append(out, s.ElementText(e))
	}
	return out
}

func chainTexts(f nft.Family, chains []*nft.Chain) []string {
	var out []string
	for _, c := range chains {
		out = append(out, fmt.Sprintf("%s %+v", c.Name, c.Base))
		for _, r := range c.Rules {
			out = append(out, "\t"+r.Text(f))
		}
	}
	return out
}

// sorted returns t with the elements of each set sorted, as Ruleset's.
func sorted(t *nft.Table) *nft.Table {
	for _, s := range t.Sets {
		s.SortElements()
	}
	return t
}
