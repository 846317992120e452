package compile

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/nftproxy/nftproxy/nft"
)

// Session affinity (sessionAffinity: ClientIP) keeps ONE dynamic set per
// family, `affinity`, filled from the packet path: the client address and
// the ID of the endpoint of the Service port it was sent to, each element
// with the Service's timeout.
//
// A port with affinity has chains of its own. Its endpoint chain starts
// with one rule per endpoint: "is this client remembered with this
// endpoint": if so, refresh the element and DNAT to it. Other clients go
// on to the random choice, whose rules record the endpoint they pick. The
// memory is only ever read through the rules of the port's current
// endpoints, so an endpoint that is removed can never be chosen from it
// again: its rule vanishes in the same transaction that removes it, and
// its elements time out unread.
//
// The ID names the Service port and the endpoint, not the address the
// client connected to, so every entry point of the port (ClusterIP,
// NodePort, externalIPs, load-balancer IPs) shares one memory, as
// kube-proxy's does. It is written `numgen random mod 1 offset ID`: a
// numgen that can only draw ID. nft 1.0.6 cannot parse a literal inside a
// lookup key (`ip saddr . 10.0.0.1 @s`), nor compare the value a map
// returns, but lists and reloads this. IDs are a 32-bit hash: two
// port-endpoint pairs sharing one (about one in 2^32 for a given pair)
// share memory, which can send a client to the other pair's endpoint; the
// rule that does so only ever DNATs to a current endpoint of the port the
// client asked for.
//
// Cost: a new connection to an n-endpoint Service with affinity evaluates
// up to n set lookups before the random choice (kube-proxy's nftables mode
// does the same: one affinity set per endpoint, checked in turn).

// affinity is how a port remembers clients: seconds is the timeout (0: the
// port has no affinity), port names the Service port the IDs belong to.
type affinity struct {
	seconds uint32
	port    string
}

// id is the ID ep is remembered by, for this port.
func (a affinity) id(ep endpoint) uint32 {
	h := fnv.New32a()
	h.Write([]byte(a.port))
	h.Write([]byte{0})
	h.Write(ep.addr.AsSlice())
	h.Write([]byte(strconv.Itoa(int(ep.port))))
	return h.Sum32()
}

// key is the memory's key for ep: the client, then ep's ID.
func (a affinity) key(ep endpoint) (keys []nft.Field, n nft.Numgen) {
	return []nft.Field{nft.Saddr}, nft.Numgen{Mod: 1, Offset: a.id(ep)}
}

// affinityFullComment explains the last rule of a chain with affinity:
// when the set is full, recording fails and ends the picking rule, so the
// connection still needs an endpoint.
const affinityFullComment = "affinity set full"

// recall is one rule per endpoint: a client remembered with ep has its
// element refreshed and goes to ep.
func (a affinity) recall(proto uint8, eps []endpoint) []nft.Rule {
	rules := make([]nft.Rule, len(eps))
	for i, ep := range eps {
		keys, n := a.key(ep)
		rules[i] = nft.Rule{Stmts: []nft.Stmt{
			nft.InSet{Keys: keys, Num: n, Set: nft.SetAffinity},
			a.record(ep),
			dnatTo(proto, ep),
		}}
	}
	return rules
}

// record remembers that the client was sent to ep.
func (a affinity) record(ep endpoint) nft.Stmt {
	keys, n := a.key(ep)
	return nft.UpdateSet{Set: nft.SetAffinity, Keys: keys, Num: n, Timeout: a.seconds}
}

// flatLimit is the most endpoints one chain picks from rule by rule. A
// Service with more is split into about √n bucket chains of about √n
// endpoints, so a new connection evaluates about √n rules instead of n/2.
const flatLimit = 32

// chains returns the chain called name that first sends a client back to
// the endpoint it chose before, if that is still one of eps, and otherwise
// picks one of eps uniformly and remembers it; plus its bucket chains for
// a large Service.
func (a affinity) chains(name string, proto uint8, eps []endpoint) []*nft.Chain {
	chains := a.pickChains(name, proto, eps)
	chains[0].Rules = append(a.recall(proto, eps), chains[0].Rules...)
	return chains
}

func (a affinity) pickChains(name string, proto uint8, eps []endpoint) []*nft.Chain {
	if len(eps) <= flatLimit {
		rules := pickRules(len(eps), func(i int) []nft.Stmt { return []nft.Stmt{a.record(eps[i]), dnatTo(proto, eps[i])} })
		rules = append(rules, nft.Rule{Stmts: []nft.Stmt{dnatTo(proto, eps[len(eps)-1])}, Comment: affinityFullComment})
		return []*nft.Chain{{Name: name, Rules: rules}}
	}
	groups := split(eps, isqrtCeil(len(eps)))
	top := &nft.Chain{Name: name}
	chains := []*nft.Chain{top}
	for i, g := range groups {
		bucket := fmt.Sprintf("%s/b%d", name, i)
		chains = append(chains, a.pickChains(bucket, proto, g)[0])
	}
	remaining := len(eps)
	for i, g := range groups {
		stmts := []nft.Stmt{nft.GotoChain(fmt.Sprintf("%s/b%d", name, i))}
		if i < len(groups)-1 {
			stmts = append([]nft.Stmt{nft.Random{Mod: uint32(remaining), Below: uint32(len(g))}}, stmts...)
		}
		top.Rules = append(top.Rules, nft.Rule{Stmts: stmts})
		remaining -= len(g)
	}
	return chains
}

func dnatTo(proto uint8, ep endpoint) nft.DNAT {
	return nft.DNAT{Proto: proto, Addr: ep.addr, Port: ep.port}
}

// pickRules returns n rules where rule i is taken with probability
// 1/(n-i) given that no earlier rule was: every endpoint is chosen with
// probability 1/n, using no set at all (sets are what is expensive to
// create, see docs/ruleset.md).
func pickRules(n int, action func(i int) []nft.Stmt) []nft.Rule {
	rules := make([]nft.Rule, n)
	for i := range n {
		stmts := action(i)
		if i < n-1 {
			stmts = append([]nft.Stmt{nft.Random{Mod: uint32(n - i), Below: 1}}, stmts...)
		}
		rules[i] = nft.Rule{Stmts: stmts}
	}
	return rules
}

// split cuts eps into k contiguous groups whose sizes differ by at most one.
func split(eps []endpoint, k int) [][]endpoint {
	groups := make([][]endpoint, 0, k)
	start := 0
	for i := range k {
		size := len(eps) / k
		if i < len(eps)%k {
			size++
		}
		groups = append(groups, eps[start:start+size])
		start += size
	}
	return groups
}

func isqrtCeil(n int) int {
	r := 1
	for r*r < n {
		r++
	}
	return r
}
