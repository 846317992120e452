package agent

import (
	"net/netip"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// CompilerOptions maps a validated configuration and the Node onto the
// compiler's options. The Node matters for detectLocalMode NodeCIDR, where
// the Pods of this node are told apart by its spec.podCIDRs.
func CompilerOptions(c *config.Configuration, node model.Node) compile.Options {
	o := compile.DefaultOptions()
	o.MasqueradeBit = int(c.MasqueradeBit)
	o.MasqueradeAll = c.MasqueradeAll
	o.NodePortAddresses = c.NodePortCIDRs()
	o.LoadBalancing = c.LoadBalancing.Default
	o.Maglev = compile.Maglev{TableSize: c.LoadBalancing.Maglev.TableSize, Seed: c.LoadBalancing.Maglev.Seed}
	o.DropInvalid = c.Conntrack.DropInvalid
	o.DropNodePortsOnOtherAddresses = c.DropNodePortsOnOtherAddresses
	switch c.DetectLocalMode {
	case config.LocalModeNodeCIDR:
		o.LocalCIDRs = append([]netip.Prefix(nil), node.PodCIDRs...)
	default:
		o.LocalCIDRs = c.ClusterCIDRs()
	}
	return o
}
