//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestNotificationsOfOthers: a subscription hears every transaction others
// commit, in order, with its generation and what it changed in our tables
// (elements decoded as we wrote them); none of ours, small (announced and
// skipped by port ID) or large (not announced: the group is left around
// it), and no loss for them.
func TestNotificationsOfOthers(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	commits, err := p.k.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := mixedSnapshot()
	sealedSync(t, p, snap) // a first sync: large
	snap.Slices[0].Endpoints = snap.Slices[0].Endpoints[1:]
	if plan := sealedSync(t, p, snap); plan.Empty() || plan.Full {
		t.Fatalf("second sync: %d ops, full=%v; want a small patch", len(plan.Ops), plan.Full)
	}
	gen, err := p.k.Generation()
	if err != nil {
		t.Fatal(err)
	}
	svcIPs := p.committed[nft.IPv4].Set("service-ips")
	e := svcIPs.Elements[0]
	for _, tc := range []struct {
		nft  string
		want []string
	}{
		{"delete element ip kube-proxy service-ips { " + svcIPs.KeyText(e.Key) + " }",
			[]string{"ip element deleted service-ips " + svcIPs.ElementText(e)}},
		{"add table ip other", nil},
		{"add rule ip kube-proxy services ip daddr { 10.0.0.1, 10.0.0.2 } counter", []string{
			"ip set added __set0 (anonymous)", "ip element added __set0 ?", "ip element added __set0 ?", "ip rule added services"}},
		{"add chain ip6 kube-proxy c1", []string{"ip6 chain added c1"}},
		{"rename chain ip6 kube-proxy c1 c2", []string{"ip6 chain changed c2"}},
		{"delete chain ip6 kube-proxy c2", []string{"ip6 chain deleted c2"}},
		{"flush chain ip kube-proxy services", append(repeat("ip rule deleted services", len(p.committed[nft.IPv4].Chain("services").Rules)+1),
			"ip set deleted __set0")}, // the kernel does not say it was anonymous
		{"add counter ip kube-proxy theirs", []string{"ip counter added theirs"}},
		{"delete counter ip kube-proxy theirs", []string{"ip counter deleted theirs"}},
		{"add chain ip kube-proxy b { type filter hook input priority 0 ; }", []string{"ip base chain added b"}},
	} {
		t.Run(tc.nft, func(t *testing.T) {
			nftIn(t, c.Node, strings.Fields(tc.nft)...)
			gen = nft.NextGeneration(gen)
			got := next(t, commits)
			if got.Lost || got.Gen != gen {
				t.Fatalf("commit %+v, want generation %d", got, gen)
			}
			if diff := cmp.Diff(tc.want, changeTexts(got.Changes, p.committed)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

// sealedSync is proxy.sync with the plan sealed with the generation it
// was made from, as the Dataplane's are: an unsealed plan cannot tell
// whether somebody else committed while the announcements were muted.
func sealedSync(t *testing.T, p *proxy, snap model.Snapshot) *nft.Plan {
	t.Helper()
	gen, err := p.k.Generation()
	if err != nil {
		t.Fatal(err)
	}
	desired := p.compile(t, snap)
	plan := nft.Diff(p.committed, desired)
	plan.Gen = gen
	if err := p.k.Apply(plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
	p.committed = desired
	return plan
}

func next(t *testing.T, commits <-chan nft.Commit) nft.Commit {
	t.Helper()
	select {
	case c := <-commits:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no announcement within 10s")
		return nft.Commit{}
	}
}

// changeTexts renders changes, their elements as our sets print them ("?"
// for the sets of others' rules).
func changeTexts(changes []nft.Change, ours nft.Ruleset) []string {
	var out []string
	for _, c := range changes {
		s := fmt.Sprintf("%s %s %s", c.Family, c.Kind, c.Name)
		if c.Base {
			s = fmt.Sprintf("%s base %s %s", c.Family, c.Kind, c.Name)
		}
		if c.Anonymous {
			s += " (anonymous)"
		}
		if c.Kind == nft.ElementAdded || c.Kind == nft.ElementDeleted {
			set := ours[c.Family].Set(c.Name)
			switch {
			case set == nil:
				s += " ?"
			case c.Element == nil:
				s += " undecoded"
			default:
				s += " " + set.ElementText(*c.Element)
			}
		}
		out = append(out, s)
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestNotificationLoss: when others announce more than the receive buffer
// holds while the subscriber is busy, the kernel drops announcements and
// the subscription reports the loss, then goes on with the next ones.
func TestNotificationLoss(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	p.sync(t, mixedSnapshot())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	commits, err := p.k.SubscribeBuffer(ctx, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the subscription's channel so that its reader waits, then
	// announce 20,000 elements (about 2 MB) at once.
	for i := range 20 {
		nftIn(t, c.Node, "add", "table", "ip", fmt.Sprintf("t%d", i))
	}
	var elems []string
	for i := range 20000 {
		elems = append(elems, fmt.Sprintf("10.%d.%d.1", i/256, i%256))
	}
	file := filepath.Join(t.TempDir(), "big.nft")
	text := "add table ip big\nadd set ip big s { type ipv4_addr; }\nadd element ip big s { " + strings.Join(elems, ", ") + " }\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	nftIn(t, c.Node, "-f", file)
	big, err := p.k.Generation()
	if err != nil {
		t.Fatal(err)
	}
	// The kernel reports the overflow at the next receive, before what
	// is still queued from before it.
	for got := next(t, commits); !got.Lost; got = next(t, commits) {
		if got.Gen == big {
			t.Fatal("the buffer overflowed and no loss was reported")
		}
	}
	// Until the queue is empty the kernel drops every announcement and
	// reports no more: the subscription has emptied it, so the next
	// transaction is announced, and is the next thing received.
	nftIn(t, c.Node, "add", "table", "ip", "after")
	if got := next(t, commits); got.Lost || got.Gen != nft.NextGeneration(big) {
		t.Fatalf("after the loss: %+v, want generation %d", got, nft.NextGeneration(big))
	}
}
