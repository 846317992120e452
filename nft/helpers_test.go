package nft_test

import (
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

var testNode = model.Node{Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("fd00::1")}}

func rulesetOf(s *model.Snapshot) nft.Ruleset {
	rs, _ := compile.Ruleset(s, testNode, compile.DefaultOptions())
	return rs
}
