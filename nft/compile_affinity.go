package nft

import "net/netip"

// Session affinity (sessionAffinity: ClientIP) keeps ONE dynamic map per
// family, `affinity`, filled from the packet path: client address, Service
// address, protocol and port map to the endpoint the client was sent to,
// with the Service's timeout. It is a constant cost whatever the number of
// Services (docs/ruleset.md): no per-Service or per-endpoint set.
//
// The chain of a Service with affinity starts with a rule that refreshes
// the client's element and DNATs to the endpoint it holds; only clients
// without an element go on to the random choice, whose rules record it.
//
// nft 1.0.6 cannot compare a map's value with a constant, so a rule cannot
// check that the remembered endpoint is still one of the Service's: the
// agent deletes elements that point at endpoints that went away right
// after the sync that removed them (proxy/conntrack's affinity clean-up).

// affinityKeys is the key of the affinity map: who connects to what.
var affinityKeys = []Field{Saddr, Daddr, L4Proto, Dport}

// affinityFullComment explains the last rule of a chain with affinity:
// when the map is full, recording fails and ends the picking rule, so the
// connection still needs an endpoint.
const affinityFullComment = "affinity map full"

// affinityHit refreshes the timeout of a client's element and DNATs to the
// endpoint it holds. The update keeps the data of an element that exists;
// its data only matters when there is none, and then the lookup before it
// has already failed.
func affinityHit(f Family, seconds uint32) Rule {
	none := []Value{{Addr: netip.IPv4Unspecified()}, {Num: 0}}
	if f == IPv6 {
		none[0].Addr = netip.IPv6Unspecified()
	}
	return Rule{Stmts: []Stmt{
		InSet{affinityKeys, mapAffinity},
		UpdateSet{Set: mapAffinity, Keys: affinityKeys, Timeout: seconds, Data: none},
		DNATMap{Keys: affinityKeys, Map: mapAffinity},
	}}
}

// affinityRecord remembers that the client was sent to ep.
func affinityRecord(seconds uint32, ep endpoint) UpdateSet {
	return UpdateSet{Set: mapAffinity, Keys: affinityKeys, Timeout: seconds,
		Data: []Value{{Addr: ep.addr}, {Num: ep.port}}}
}
