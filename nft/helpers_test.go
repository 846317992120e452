package nft_test

import (
	"fmt"
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

var testNode = model.Node{Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("fd00::1")}}

// cluster builds a snapshot of n Services with eps endpoints each; Service
// i has ClusterIP 10.96.x.y, NodePort 30000+i and endpoints 10.(i).x.y.
func cluster(n, eps int) *model.Snapshot {
	s := &model.Snapshot{}
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		s.Services = append(s.Services, model.Service{
			Namespace: "ns", Name: name, Type: model.NodePort,
			ClusterIPs: []netip.Addr{netip.AddrFrom4([4]byte{10, 96, byte(i >> 8), byte(i)})},
			Ports:      []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: 80, NodePort: uint16(30000 + i)}},
		})
		sl := model.EndpointSlice{Namespace: "ns", Name: name + "-abc", Service: name, AddressType: model.IPv4,
			Ports: []model.EndpointPort{{Name: "http", Protocol: model.TCP, Port: 8080}}}
		for j := range eps {
			sl.Endpoints = append(sl.Endpoints, endpointAt(i, j))
		}
		s.Slices = append(s.Slices, sl)
	}
	return s
}

func endpointAt(svc, j int) model.Endpoint {
	return model.Endpoint{Ready: true, Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, byte(svc%200 + 1), byte(j >> 8), byte(j)})}}
}

func rulesetOf(s *model.Snapshot) nft.Ruleset {
	rs, _ := compile.Ruleset(s, testNode, compile.DefaultOptions())
	return rs
}
