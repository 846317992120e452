package main

import (
	"fmt"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// kind is one kind of tampering: the nft command of run i, and whether
// nftproxy repairs it (a change to another table needs nothing).
type kind struct {
	name    string
	command func(i int) []string
	repairs bool
}

// kinds are the tamperings measured, on objects of the desired tables.
func kinds(rs nft.Ruleset) []kind {
	t := rs[nft.IPv4]
	eps := biggestEndpointMap(t)
	element := func(set string) func(i int) []string {
		s := t.Set(set)
		return func(i int) []string {
			e := s.Elements[(i*9973)%len(s.Elements)]
			return []string{"delete", "element", "ip", nft.TableName, set, "{ " + s.KeyText(e.Key) + " }"}
		}
	}
	fixed := func(args ...string) func(int) []string { return func(int) []string { return args } }
	var affinity []string
	for _, c := range t.Chains {
		if strings.HasPrefix(c.Name, "service-") {
			affinity = append(affinity, c.Name)
		}
	}
	ks := []kind{
		{"element deleted (cluster-ip-ports)", element("cluster-ip-ports"), true},
		{"element deleted (" + eps.Name + ")", element(eps.Name), true},
		{"chain flushed (pick-endpoint)", fixed("flush", "chain", "ip", nft.TableName, "pick-endpoint"), true},
		{"rule added (services)", fixed("add", "rule", "ip", nft.TableName, "services", "counter"), true},
		{"range deleted (service-cidrs)", fixed("delete", "element", "ip", nft.TableName, "service-cidrs", "{ 10.96.0.0/12 }"), true},
		{"range added (service-cidrs)", fixed("add", "element", "ip", nft.TableName, "service-cidrs", "{ 10.200.0.0/16 }"), true},
		{"table deleted (ip)", fixed("delete", "table", "ip", nft.TableName), true},
		{fmt.Sprintf("map flushed (%s, %d elements)", eps.Name, len(eps.Elements)),
			fixed("flush", "map", "ip", nft.TableName, eps.Name), true},
		{"another table changed", func(i int) []string { return []string{"add", "table", "ip", fmt.Sprintf("other-%d", i)} }, false},
	}
	if len(affinity) > 0 {
		ks = append(ks[:3], append([]kind{{"chain flushed (a Service's, with affinity)", func(i int) []string {
			return []string{"flush", "chain", "ip", nft.TableName, affinity[(i*31)%len(affinity)]}
		}, true}}, ks[3:]...)...)
	}
	return ks
}

// biggestEndpointMap returns the endpoint map of ClusterIPs (endpoints-n)
// with the most elements.
func biggestEndpointMap(t *nft.Table) *nft.Set {
	var out *nft.Set
	for _, s := range t.Sets {
		if strings.HasPrefix(s.Name, nft.MapEndpoints+"-") && (out == nil || len(s.Elements) > len(out.Elements)) {
			out = s
		}
	}
	return out
}
