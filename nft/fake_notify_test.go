package nft_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestFakeAnnouncesForeignPlans: what the Fake announces, as the kernel
// does: others' transactions with their changes and generation (deleting
// a table announces its rules, sets and chains going first), never the
// applier's own.
func TestFakeAnnouncesForeignPlans(t *testing.T) {
	f := nft.NewFake()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := f.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs := rulesetOf(synth.Plain(1, 1))
	converge(t, f, nil, rs) // ours: not announced
	v4 := rs[nft.IPv4]
	e := v4.Set("cluster-ip-ports").Elements[0]
	plans := []*nft.Plan{
		{}, // another table's
		{Ops: []nft.Op{{Kind: nft.DeleteElements, Family: nft.IPv4, Name: "cluster-ip-ports", Elements: []nft.Element{e}},
			{Kind: nft.AddElements, Family: nft.IPv4, Name: "cluster-ip-ports", Elements: []nft.Element{e, e}}}},
		{Ops: []nft.Op{{Kind: nft.FlushChain, Family: nft.IPv4, Name: "services"},
			{Kind: nft.AddChain, Family: nft.IPv4, Chain: &nft.Chain{Name: "services"}}}},
		{Ops: []nft.Op{{Kind: nft.DeleteTable, Family: nft.IPv6, Name: nft.TableName}}},
	}
	for _, p := range plans {
		if err := f.Foreign(p); err != nil {
			t.Fatal(err)
		}
	}
	v6 := rs[nft.IPv6]
	want := []string{
		"3:",
		"4: element deleted cluster-ip-ports " + v4.Set("cluster-ip-ports").ElementText(e) + ", element added cluster-ip-ports " + v4.Set("cluster-ip-ports").ElementText(e),
		fmt.Sprintf("5:%s", repeat(", rule deleted services", len(v4.Chain("services").Rules))[1:]),
		"6:" + tableDeletion(v6),
	}
	var got []string
	for range plans {
		got = append(got, commitText(<-ch))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("announcements (-want +got):\n%s", diff)
	}
	cancel()
	if _, open := <-ch; open {
		t.Error("the channel is open after the subscription ended")
	}
}

func tableDeletion(t *nft.Table) string {
	s := ""
	for _, c := range t.Chains {
		s += repeat(", rule deleted "+c.Name, len(c.Rules))
	}
	for _, set := range t.Sets {
		s += ", set deleted " + set.Name
	}
	for _, c := range t.Counters { // the kernel deletes objects after sets (nft_flush_table)
		s += ", counter deleted " + c.Name
	}
	for _, c := range t.Chains {
		s += ", chain deleted " + c.Name
	}
	return s[1:] + ", table deleted "
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func commitText(c nft.Commit) string {
	if c.Lost {
		return "lost"
	}
	s := fmt.Sprintf("%d:", c.Gen)
	for i, ch := range c.Changes {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %s %s", ch.Kind, ch.Name)
		if ch.Element != nil {
			s += " " + (&nft.Set{Key: []nft.DataType{nft.TypeIPv4Addr, nft.TypeInetProto, nft.TypeInetService}}).ElementText(*ch.Element)
		}
	}
	return s
}

// TestFakeLosesWhatASlowSubscriberMisses: a subscriber that falls behind
// is told announcements were lost, as by a full receive buffer.
func TestFakeLosesWhatASlowSubscriberMisses(t *testing.T) {
	f := nft.NewFake()
	ch, err := f.Subscribe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if err := f.Foreign(&nft.Plan{}); err != nil {
			t.Fatal(err)
		}
	}
	lost := false
	for len(ch) > 0 {
		lost = lost || (<-ch).Lost
	}
	if !lost {
		t.Fatal("1000 announcements to a subscriber that read none, and no loss announced")
	}
}
