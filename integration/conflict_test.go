//go:build integration

package integration

import (
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
)

// racingKernel runs somebody else's nft command in the node namespace
// just before the next plan reaches the kernel: after the Dataplane read
// the generation and planned, before its commit.
type racingKernel struct {
	*kernel.Kernel
	t       *testing.T
	ns      *lab.NS
	race    []string // the nft command; nil once it ran
	refused []error  // what Apply returned for the plan that raced
}

func (k *racingKernel) Apply(p *nft.Plan) error {
	if k.race == nil || p.Empty() {
		return k.Kernel.Apply(p)
	}
	before, _ := k.Generation()
	nftIn(k.t, k.ns, k.race...)
	after, _ := k.Generation()
	k.t.Logf("plan of %d ops made from generation %d; `nft %s` moved the generation %d -> %d",
		len(p.Ops), p.Gen, strings.Join(k.race, " "), before, after)
	k.race = nil
	err := k.Kernel.Apply(p)
	k.refused = append(k.refused, err)
	k.t.Logf("kernel answer to the plan: %v", err)
	return err
}

// TestDataplaneReplansAfterForeignCommit: somebody commits between the
// Dataplane's planning and its commit. The kernel refuses the batch, which
// carries the generation it was planned from; the Dataplane reads the
// tables back and commits a new plan from them. Its own change is made,
// the other commit's damage to our table is repaired, and what that commit
// did elsewhere stays.
func TestDataplaneReplansAfterForeignCommit(t *testing.T) {
	tests := []struct {
		name         string
		race         string
		wantRepaired bool
	}{
		{"our map element deleted", "delete element ip kube-proxy cluster-ip-ports { 10.96.1.10 . tcp . 80 }", true},
		{"a rule added to our chain", "add rule ip kube-proxy services counter", true},
		{"another table added", "add table inet someone-else", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := lab.NewCluster(t, 0)
			p := newProxy(t, c)
			k := &racingKernel{Kernel: p.k, t: t, ns: c.Node}
			d := dataplane.New(k)
			snap := mixedSnapshot()
			in := dataplane.Input{Snapshot: &snap, Node: p.node, Options: p.opts}
			if _, err := d.Sync(in); err != nil {
				t.Fatal(err)
			}
			others := nftIn(t, c.Node, "list", "tables")
			snap.Slices[0].Endpoints = snap.Slices[0].Endpoints[1:] // web loses an endpoint
			in.Changed = map[string]bool{snap.Slices[0].Namespace + "/" + snap.Slices[0].Service: true}
			k.race = strings.Fields(tc.race)
			res, err := d.Sync(in)
			t.Logf("sync: full=%v ops=%d repaired=%v replanned=%d, err=%v", res.Full, res.Ops, res.Repaired, res.Replanned, err)
			if err != nil || len(k.refused) != 1 || !nft.IsConflict(k.refused[0]) {
				t.Fatalf("sync error %v; the racing plan got %v, want it refused as a conflict", err, k.refused)
			}
			if res.Replanned != 1 || res.Full || res.Repaired != tc.wantRepaired {
				t.Fatalf("result %+v, want a patch planned again once, repaired=%v", res, tc.wantRepaired)
			}
			p.committed = p.compile(t, snap)
			assertInSync(t, p)
			if !tc.wantRepaired && nftIn(t, c.Node, "list", "tables") == others {
				t.Error("the other commit's table is gone")
			}
		})
	}
}
