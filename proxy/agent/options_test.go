package agent

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

func TestCompilerOptions(t *testing.T) {
	node := model.Node{PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24")}}
	tests := []struct {
		name string
		set  func(*config.Configuration)
		want func(*compile.Options)
	}{
		{"defaults", func(*config.Configuration) {}, func(*compile.Options) {}},
		{"cluster CIDR", func(c *config.Configuration) { c.ClusterCIDR = "10.244.0.0/16,fd00::/48" },
			func(o *compile.Options) {
				o.LocalCIDRs = []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00::/48")}
			}},
		{"node CIDR", func(c *config.Configuration) { c.DetectLocalMode = config.LocalModeNodeCIDR },
			func(o *compile.Options) { o.LocalCIDRs = node.PodCIDRs }},
		{"masquerade", func(c *config.Configuration) { c.MasqueradeAll, c.MasqueradeBit = true, 3 },
			func(o *compile.Options) { o.MasqueradeAll, o.MasqueradeBit = true, 3 }},
		{"nodeport CIDRs", func(c *config.Configuration) { c.NodePortAddresses = []string{"198.51.100.0/24"} },
			func(o *compile.Options) {
				o.NodePortAddresses = []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}
			}},
		{"maglev", func(c *config.Configuration) {
			c.LoadBalancing = config.LoadBalancing{Default: "maglev", Maglev: config.Maglev{TableSize: 65521, Seed: 9}}
		}, func(o *compile.Options) {
			o.LoadBalancing, o.Maglev = "maglev", compile.Maglev{TableSize: 65521, Seed: 9}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			tc.set(c)
			if err := config.Validate(c); err != nil {
				t.Fatal(err)
			}
			want := compile.DefaultOptions()
			tc.want(&want)
			if diff := cmp.Diff(want, CompilerOptions(c, node), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
