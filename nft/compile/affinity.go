package compile

import "github.com/nftproxy/nftproxy/nft"

// Session affinity (sessionAffinity: ClientIP) keeps ONE dynamic set per
// family, `affinity`, filled from the packet path: client address, Service
// address, protocol, port and the endpoint address the client was sent to,
// each element with the Service's timeout.
//
// The chain of a Service with affinity starts with one rule per endpoint:
// "is this client remembered with this endpoint": if so, refresh the
// element and DNAT to it. Other clients go on to the random choice, whose
// rules record the endpoint they pick. The memory is only ever read
// through the rules of the Service's current endpoints, so an endpoint
// that is removed can never be chosen from it again: its rule vanishes in
// the same transaction that removes it, and its elements time out unread.
//
// Why not a map from client to endpoint: nft 1.0.6 cannot compare a map's
// value with the Service's endpoints, so a map needs a second transaction
// to forget removed endpoints; and the kernel (6.18) checks every new
// binding of a MAP against every binding it already has, which made a map
// looked up from 5,000 Service chains load in quadratic time. Lookups and
// updates of a plain set are not checked that way.
//
// Cost: a new connection to an n-endpoint Service with affinity evaluates
// up to n set lookups before the random choice (kube-proxy's nftables mode
// does the same: one affinity set per endpoint, checked in turn).
//
// The key has five parts, not six with the endpoint port: nft packs the
// type of a concatenation in 32 bits, 6 bits per part, so nft 1.0.6 lists
// a sixth part wrongly. The address is enough: every rule that reads the
// memory DNATs to a current endpoint of the Service.

// affinityKeys are the packet fields of an affinity element: who connects
// to what; the endpoint address follows as a constant.
var affinityKeys = []nft.Field{nft.Saddr, nft.Daddr, nft.L4Proto, nft.Dport}

// affinityFullComment explains the last rule of a chain with affinity:
// when the set is full, recording fails and ends the picking rule, so the
// connection still needs an endpoint.
const affinityFullComment = "affinity set full"

// affinityRecall is one rule per endpoint: a client remembered with ep has
// its element refreshed and goes to ep.
func affinityRecall(proto uint8, seconds uint32, eps []endpoint) []nft.Rule {
	rules := make([]nft.Rule, len(eps))
	for i, ep := range eps {
		consts := []nft.Value{{Addr: ep.addr}}
		rules[i] = nft.Rule{Stmts: []nft.Stmt{
			nft.InSetWith{Keys: affinityKeys, Consts: consts, Set: setAffinity},
			nft.UpdateSet{Set: setAffinity, Keys: affinityKeys, Consts: consts, Timeout: seconds},
			dnatTo(proto, ep),
		}}
	}
	return rules
}

// affinityRecord remembers that the client was sent to ep.
func affinityRecord(seconds uint32, ep endpoint) nft.Stmt {
	return nft.UpdateSet{Set: setAffinity, Keys: affinityKeys, Consts: []nft.Value{{Addr: ep.addr}}, Timeout: seconds}
}
