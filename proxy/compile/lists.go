package compile

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/nftproxy/nftproxy/nft"
)

// Endpoint lists: how a Service without session affinity picks an endpoint
// with no rule of its own (see docs/ruleset.md for the measurements).
//
// Each entry (a Service address and port, or a NodePort) that has endpoints
// brings its list into one of four data maps. A list of n endpoints is n
// elements, the entry's key, then n*n+i : endpoint i. The ranges
// [n*n, n*n+n) of different lengths never overlap, so one map holds lists
// of every length, and a pick chain holds one rule, a rung, per length in
// use:
//
//	dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 3 offset 9 map @endpoints
//
// The rung for length n draws one of n*n .. n*n+n-1 uniformly; only a list
// of length n has those keys, so for any other entry the lookup misses, the
// rule does not match, and the next rung is tried.
//
// So a change of a Service's endpoints, their addresses or their number,
// is data-map elements only: the kernel re-validates the table for new
// rules and jump/goto elements, never for data elements, and the cost of
// such a change does not grow with the table. Only a length that no entry
// had before adds a rung, a rule.

// The four endpoint maps, in the order their lists are packed in a claim.
var listMaps = [...]string{nft.MapEndpoints, nft.MapLocalEndpoints, nft.MapNodePortEndpoints, nft.MapNodePortLocalEndpoints}

// maxListLen is the longest list a map can hold: n*n+n-1 must fit in 32 bits.
const maxListLen = 65535

// endpointList is the endpoints an entry brings into listMaps[m]. A hash
// list (maglev.go) is a Maglev table: eps are its slots, endpoint eps[j] at
// index maglevOffset+j, picked by the hash rung.
type endpointList struct {
	m    int
	eps  []endpoint
	hash bool
}

// first is the index of the list's first element.
func (l endpointList) first() uint32 { return l.firstOf(len(l.eps)) }

// firstOf is the index of the first element of a list like l of n
// endpoints (a packed list's length is known before its endpoints).
func (l endpointList) firstOf(n int) uint32 {
	if l.hash {
		return maglevOffset
	}
	return rungOffset(n)
}

// rung is the key of the list's rung in rungs: its length, or hashRung.
func (l endpointList) rung() int {
	if l.hash {
		return hashRung
	}
	return len(l.eps)
}

// hashRung counts hash lists in rungs: no list length is negative.
const hashRung = -1

// hashFlag marks a hash list in the map byte of packed lists.
const hashFlag = 0x80

// listMap returns the index of the endpoint map named name.
func listMap(name string) int {
	for i, m := range listMaps {
		if m == name {
			return i
		}
	}
	panic(fmt.Sprintf("compile: %q is not an endpoint map", name))
}

// rungOffset is the first index of a list of n endpoints.
func rungOffset(n int) uint32 { return uint32(n) * uint32(n) }

// listElements returns the elements of list l for the entry with key key.
// Their keys and data share one array: two allocations a list, not two an
// element.
func listElements(key []nft.Value, l endpointList) []nft.Element {
	n, k := len(l.eps), len(key)+3
	out := make([]nft.Element, n)
	vals := make([]nft.Value, n*k)
	for i := range l.eps {
		out[i] = fillListElement(vals[i*k:(i+1)*k], key, l, i)
	}
	return out
}

// listElement returns endpoint i of list l for the entry with key key.
func listElement(key []nft.Value, l endpointList, i int) nft.Element {
	return fillListElement(make([]nft.Value, len(key)+3), key, l, i)
}

// fillListElement writes endpoint i of list l for the entry with key key
// into v (len(key)+3 values: the key, the endpoint's index, its address and
// port) and returns the element over them.
func fillListElement(v, key []nft.Value, l endpointList, i int) nft.Element {
	k := len(key) + 1
	copy(v, key)
	v[k-1] = nft.Value{Num: l.first() + uint32(i)}
	v[k] = nft.Value{Addr: l.eps[i].addr}
	v[k+1] = nft.Value{Num: uint32(l.eps[i].port)}
	return nft.Element{Key: v[:k:k], Data: v[k : k+2 : k+2]}
}

// packLists packs lists for a claim: for each, its map's index, its
// length and its endpoints.
func packLists(ls []endpointList) string {
	var b []byte
	for _, l := range ls {
		m := byte(l.m)
		if l.hash {
			m |= hashFlag
		}
		b = append(b, m)
		b = binary.BigEndian.AppendUint32(b, uint32(len(l.eps)))
		for _, ep := range l.eps {
			b = appendValues(b, []nft.Value{{Addr: ep.addr}, {Num: uint32(ep.port)}})
		}
	}
	return string(b)
}

// nextListLen returns the map and rung (endpointList.rung) of the first
// list packed in s, and the rest of s, without unpacking its endpoints:
// counting rungs reads every list of the table.
func nextListLen(s string) (m, rung int, rest string) {
	m, n := int(s[0]&^hashFlag), int(binary.BigEndian.Uint32([]byte(s[1:5])))
	rung = n
	if s[0]&hashFlag != 0 {
		rung = hashRung
	}
	s = s[5:]
	for range 2 * n { // an address and a port per endpoint
		s = skipValue(s)
	}
	return m, rung, s
}

func unpackLists(s string) []endpointList {
	var out []endpointList
	for len(s) > 0 {
		l := endpointList{m: int(s[0] &^ hashFlag), hash: s[0]&hashFlag != 0}
		n := binary.BigEndian.Uint32([]byte(s[1:5]))
		s = s[5:]
		l.eps = make([]endpoint, n)
		for i := range l.eps {
			var vs []nft.Value
			vs, s = unpackN(s, 2)
			l.eps[i] = endpoint{addr: vs[0].Addr, port: uint16(vs[1].Num)}
		}
		out = append(out, l)
	}
	return out
}

// rungs counts, per endpoint map, how many winning lists have each length:
// the pick chain has a rung for each length counted.
type rungs [len(listMaps)]map[int]int

func newRungs() rungs {
	var r rungs
	for i := range r {
		r[i] = map[int]int{}
	}
	return r
}

// elements returns how many elements the lists counted put in endpoint
// map m, hash lists aside (their rung does not say their length): what
// the table's assembly sizes the map for.
func (r rungs) elements(m int) int {
	n := 0
	for length, lists := range r[m] {
		if length != hashRung {
			n += length * lists
		}
	}
	return n
}

// add counts (delta 1) or uncounts (delta -1) the lists of cl.
func (r rungs) add(cl *claim, delta int) {
	if cl == nil || cl.lists == "" {
		return
	}
	for s := cl.lists; len(s) > 0; {
		var m, n int
		m, n, s = nextListLen(s)
		r[m][n] += delta
		if r[m][n] == 0 {
			delete(r[m], n)
		}
	}
}

// pickChain is the chain that picks from listMaps[m]: a rung per length,
// then the hash rung when a hash list is in use. The hash rung comes last
// so that Services that pick at random never pay for the hash; a Maglev
// entry tries the rungs of the lengths in use first (a lookup miss each).
func (r rungs) pickChain(m int, o Options) *nft.Chain {
	lens := make([]int, 0, len(r[m]))
	for n := range r[m] {
		if n != hashRung {
			lens = append(lens, n)
		}
	}
	sort.Ints(lens)
	c := &nft.Chain{Name: pickChains[m]}
	for _, n := range lens {
		c.Rules = append(c.Rules, rule(nft.DNATMap{Keys: listKeys[m], Num: nft.Numgen{Mod: uint32(n), Offset: rungOffset(n)}, Map: listMaps[m]}))
	}
	if r[m][hashRung] > 0 {
		c.Rules = append(c.Rules, o.hashRung(m))
	}
	return c
}

// pickChains are the chains that pick from each of listMaps, and listKeys
// the packet fields their entries are keyed by.
var (
	pickChains = [...]string{nft.ChainPickEndpoint, nft.ChainPickLocalEndpoint, nft.ChainPickNodePortEndpoint, nft.ChainPickNodePortLocalEndpoint}
	listKeys   = [...][]nft.Field{daddrProtoPort, daddrProtoPort, protoPort, protoPort}
)
