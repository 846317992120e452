package explain

import (
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile/fixture"
)

// TestTableNames: every set, chain and rule comment this package reads
// its meaning from is one the compiler writes, in some golden fixture (the
// names are shared, package nft's, but a name the compiler stopped
// writing would still be read in vain). A
// renamed chain or reworded comment fails here rather than leaving
// explanations that never match.
func TestTableNames(t *testing.T) {
	fixtures, err := fixture.All()
	if err != nil {
		t.Fatal(err)
	}
	sets, chains, comments := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, fx := range fixtures {
		rs, _ := fx.Compile()
		for _, tbl := range rs {
			for _, s := range tbl.Sets {
				sets[s.Name] = true
			}
			for _, c := range tbl.Chains {
				chains[c.Name] = true
				for _, r := range c.Rules {
					comments[r.Comment] = true
				}
			}
		}
	}
	for _, s := range []string{nft.SetClusterIPs, nft.SetNodePortIPs, nft.SetHairpin, nft.MapServiceIPs, nft.MapServiceNodePorts,
		nft.SetClusterIPPorts, nft.SetExternalIPPorts, nft.SetExternalLocalIPPorts, nft.SetNodePorts, nft.SetLocalNodePorts,
		nft.MapNoEndpointServices, nft.MapNoEndpointNodePorts, nft.MapFirewallIPs, nft.SetFirewallAllow, nft.SetAffinity, nft.SetServiceCIDRs} {
		if !sets[s] {
			t.Errorf("no fixture has a set %q", s)
		}
	}
	for _, c := range []string{nft.ChainServices, nft.ChainMarkMasq, nft.ChainMarkNonCluster, nft.ChainReject, nft.ChainFirewallAllow,
		nft.ChainExternal, nft.ChainExternalLocal, nft.ChainNodePort, nft.ChainNodePortLocal, nft.ChainPickLocalEndpoint, nft.ChainPickNodePortLocalEndpoint} {
		if !chains[c] {
			t.Errorf("no fixture has a chain %q", c)
		}
	}
	for _, c := range []string{commentNoLocal, commentSourceRange, commentWrongPort, commentLocalMasq, commentPodShortcut, commentLocalShortcut,
		commentUnallocated} {
		if !comments[c] {
			t.Errorf("no fixture has a rule commented %q", c)
		}
	}
}
