package dataplane

import (
	"net/netip"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

func serviceCIDR(name string, cidrs ...string) model.ServiceCIDR {
	sc := model.ServiceCIDR{Name: name}
	for _, c := range cidrs {
		sc.CIDRs = append(sc.CIDRs, netip.MustParsePrefix(c))
	}
	return sc
}

// TestServiceCIDRChange: a ServiceCIDR that appears, widens or goes changes
// service-cidrs elements only, in a partial sync that changed no Service;
// also when somebody else committed in between (the tables are read back),
// which is not taken for a repair.
func TestServiceCIDRChange(t *testing.T) {
	f := nft.NewFake()
	d := New(f)
	snap := synth.Plain(5, 2)
	snap.ServiceCIDRs = []model.ServiceCIDR{serviceCIDR("kubernetes", "10.96.0.0/16")}
	mustSync(t, d, f, input(snap))
	steps := []struct {
		name  string
		cidrs []model.ServiceCIDR
		ops   int
	}{
		{"a second one", []model.ServiceCIDR{serviceCIDR("extra", "10.97.0.0/16", "fd00:97::/112"), serviceCIDR("kubernetes", "10.96.0.0/16")}, 1},
		{"one widened over the other", []model.ServiceCIDR{serviceCIDR("extra", "10.96.0.0/12", "fd00:97::/112"), serviceCIDR("kubernetes", "10.96.0.0/16")}, 2},
		{"all gone", nil, 1},
	}
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if i == 1 {
				f.Gen++ // somebody else committed: the sync reads back
			}
			snap.ServiceCIDRs = step.cidrs
			res := mustSync(t, d, f, input(snap, []string{}...))
			if res.Full || res.Repaired || res.Ops != step.ops {
				t.Errorf("%+v, want a patch of %d element operations, no repair", res, step.ops)
			}
		})
	}
}
