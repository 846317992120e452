package compile_test

import (
	"net/netip"

	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

var testNode = model.Node{Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("fd00::1")}}

// cluster is the plain synthetic cluster: n NodePort Services with eps
// ready endpoints each, Service i with ClusterIP 10.96.0.0 + i, NodePort
// 30000 + i and its EndpointSlice at Slices[i] (eps <= 100).
func cluster(n, eps int) *model.Snapshot {
	return synth.Cluster(synth.Spec{Services: n, Endpoints: eps})
}
