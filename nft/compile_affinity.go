package nft

import "net/netip"

// Session affinity (sessionAffinity: ClientIP) keeps ONE dynamic map per
// family, `affinity`, filled from the packet path: client address, Service
// address, protocol and port map to the endpoint the client was sent to,
// with the Service's timeout. A dynamic set with the same keys,
// `affinity-clients`, answers "is this client remembered" for the
// per-Service chains, and one fixed chain, affinity-dnat, DNATs from the
// map.
//
// Why two: the kernel (6.18) checks every new binding of a MAP against
// every binding the map already has (nf_tables_bind_set), so a map looked
// up from a rule in each of 5,000 Service chains costs time quadratic in
// the number of rules: 21.5 s to load 10,000 Services half with affinity,
// against 2.5 s without. Bindings of plain sets and of dynset updates are
// not checked, so the per-Service rules only look up the set and update
// both, and the map is looked up from affinity-dnat alone.
//
// The chain of a Service with affinity starts with a rule that, for a
// remembered client, refreshes both elements and jumps to affinity-dnat;
// other clients go on to the random choice, whose rules record it.
//
// nft 1.0.6 cannot compare a map's value with a constant, so a rule cannot
// check that the remembered endpoint is still one of the Service's: the
// agent deletes elements that point at endpoints that went away right
// after the sync that removed them (proxy/conntrack's AffinityHook).

// affinityKeys is the key of the affinity map: who connects to what.
var affinityKeys = []Field{Saddr, Daddr, L4Proto, Dport}

// affinityFullComment explains the last rule of a chain with affinity:
// when the map is full, recording fails and ends the picking rule, so the
// connection still needs an endpoint.
const affinityFullComment = "affinity map full"

// affinityHit refreshes a remembered client's elements and DNATs to its
// endpoint. The map update keeps the data of an element that exists; its
// data only matters when there is none, and the map and the set are
// updated together, so there is one.
func affinityHit(f Family, seconds uint32) Rule {
	none := []Value{{Addr: netip.IPv4Unspecified()}, {Num: 0}}
	if f == IPv6 {
		none[0].Addr = netip.IPv6Unspecified()
	}
	return Rule{Stmts: []Stmt{
		InSet{affinityKeys, setAffinityClients},
		UpdateSet{Set: mapAffinity, Keys: affinityKeys, Timeout: seconds, Data: none},
		UpdateSet{Set: setAffinityClients, Keys: affinityKeys, Timeout: seconds},
		JumpTo(chainAffinityDNAT),
	}}
}

// affinityRecord remembers that the client was sent to ep: the map first,
// so that a full map leaves the set without the key as well.
func affinityRecord(seconds uint32, ep endpoint) []Stmt {
	return []Stmt{
		UpdateSet{Set: mapAffinity, Keys: affinityKeys, Timeout: seconds, Data: []Value{{Addr: ep.addr}, {Num: ep.port}}},
		UpdateSet{Set: setAffinityClients, Keys: affinityKeys, Timeout: seconds},
	}
}
