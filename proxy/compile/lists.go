package compile

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// Endpoint lists: how a Service without session affinity picks an endpoint
// with no rule of its own (see docs/ruleset.md for the measurements).
//
// Each entry (a Service address and port, or a NodePort) that has endpoints
// brings its list into a data map of its kind and length: a list of n
// endpoints is n elements of map endpoints-n, the entry's key, then i :
// endpoint i. Each map is bound by one rule, the rung of chain
// pick-endpoint-n:
//
//	dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 3 map @endpoints-3
//
// and pick-endpoint jumps to the rung chain of each length in use. Only a
// list of length n is in endpoints-n, so for any other entry the lookup
// misses, the rule does not match, and the next length is tried.
//
// So a change of a Service's endpoints, their addresses or their number,
// is data-map elements only: the kernel re-validates the table for new
// rules and jump/goto elements, never for data elements, and the cost of
// such a change does not grow with the table. A length that no entry had
// before adds a map, a chain and its rung; the kernel checks a new rung
// against every element of its map, which is why each length has a map
// and a chain of its own: a shared map, or a shared chain that the differ
// refills, would check every list of the table.

// The four kinds of endpoint map, in the order their lists are packed in
// a claim: each name is the prefix of the kind's maps, endpoints-3 or
// endpoints-maglev.
var listMaps = [...]string{nft.MapEndpoints, nft.MapLocalEndpoints, nft.MapNodePortEndpoints, nft.MapNodePortLocalEndpoints}

// maxListLen is the longest list an entry brings: a Service port with
// more endpoints keeps its first maxListLen, so that one Service cannot
// put millions of elements into one transaction.
const maxListLen = 65535

// endpointList is the endpoints an entry brings into a map of kind
// listMaps[m]. A hash list (maglev.go) is a Maglev table: eps are its
// slots, endpoint eps[j] at index j of the kind's maglev map, picked by the
// hash rung.
type endpointList struct {
	m    int
	eps  []endpoint
	hash bool
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

// mapName is the name of the map that holds list l.
func (l endpointList) mapName() string { return listMapName(l.m, l.rung()) }

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
	v[k-1] = nft.Value{Num: uint32(i)}
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

// listMapName is the name of kind m's map of the lists of rung
// (endpointList.rung): endpoints-3, or endpoints-maglev.
func listMapName(m, rung int) string { return listMaps[m] + "-" + rungName(rung) }

// rungChainName is the name of the chain of the rung that picks from
// listMapName(m, rung): pick-endpoint-3, or pick-endpoint-maglev.
func rungChainName(m, rung int) string { return pickChains[m] + "-" + rungName(rung) }

func rungName(rung int) string {
	if rung == hashRung {
		return "maglev"
	}
	return strconv.Itoa(rung)
}

// parseListMap returns the kind and rung of the endpoint map named name;
// ok is false when name is no endpoint map's.
func parseListMap(name string) (m, rung int, ok bool) {
	for i, prefix := range listMaps {
		rest, found := strings.CutPrefix(name, prefix+"-")
		if !found {
			continue
		}
		if rest == "maglev" {
			return i, hashRung, true
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > maxListLen || strconv.Itoa(n) != rest {
			return 0, 0, false
		}
		return i, n, true
	}
	return 0, 0, false
}

// rungs counts, per kind of endpoint map, how many winning lists have
// each length (or are hash lists): the table has a map, a chain and a
// rung for each length counted.
type rungs [len(listMaps)]map[int]int

func newRungs() rungs {
	var r rungs
	for i := range r {
		r[i] = map[int]int{}
	}
	return r
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

// inUse returns the rungs of kind m in use, in the order the pick chain
// tries them: by length, then the hash rung. The hash rung comes last so
// that Services that pick at random never pay for the hash; a Maglev
// entry tries the lengths in use first (a lookup miss each).
func (r rungs) inUse(m int) []int {
	out := make([]int, 0, len(r[m]))
	for n := range r[m] {
		if n != hashRung {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	if r[m][hashRung] > 0 {
		out = append(out, hashRung)
	}
	return out
}

// sets returns family f's endpoint maps, empty: one for each rung in use.
func (r rungs) sets(f nft.Family) []*nft.Set {
	var out []*nft.Set
	for m := range listMaps {
		for _, n := range r.inUse(m) {
			out = append(out, listSet(f, m, n))
		}
	}
	return out
}

// elements returns how many elements the lists of rung n put in kind m's
// map, or 0 for the hash rung (its rung does not say its lists' length):
// what the table's assembly sizes the map for.
func (r rungs) elements(m, n int) int {
	if n == hashRung {
		return 0
	}
	return n * r[m][n]
}

// listSet returns kind m's empty map of the lists of rung, in family f.
func listSet(f nft.Family, m, rung int) *nft.Set {
	keys := append(slices.Clip(listKeys[m]), nft.Number)
	return &nft.Set{Name: listMapName(m, rung), Map: true, Comment: listComment(m, rung),
		Typeof: keys, DataTypeof: addrPort, Key: typesOf(f, keys), Data: typesOf(f, addrPort)}
}

// listComment says what kind m's map of the lists of rung holds, in at
// most maxListComment bytes.
func listComment(m, rung int) string {
	if rung == hashRung {
		return listKinds[m] + " by Maglev: key . j is slot j"
	}
	return fmt.Sprintf("%s: key . i is endpoint i of %d", listKinds[m], rung)
}

// maxListComment is the longest comment of an endpoint map: the kernel
// keeps a set's typeof and comment in 256 bytes of user data, and with
// these keys refused comments of 85 bytes and took 80.
const maxListComment = 80

// listKinds say what each kind of endpoint map holds. "Local" endpoints
// are this node's, for traffic under externalTrafficPolicy Local.
var listKinds = [...]string{
	"Endpoints of Service IPs and ports",
	"Local endpoints of external IPs and ports",
	"Endpoints of NodePorts",
	"Local endpoints of NodePorts",
}

// chains returns the pick chains: for each kind, the chain that jumps to
// the chain of each of its rungs in use, then those chains. A rung has a
// chain of its own so that a new length adds one chain and rung: the
// differ refills a chain whose rules changed, and refilling rungs would
// check every list of the table again.
func (r rungs) chains(o Options) []*nft.Chain {
	var out []*nft.Chain
	for m := range listMaps {
		used := r.inUse(m)
		pick := &nft.Chain{Name: pickChains[m]}
		for _, n := range used {
			pick.Rules = append(pick.Rules, rule(nft.JumpTo(rungChainName(m, n))))
		}
		out = append(out, pick)
		for _, n := range used {
			out = append(out, &nft.Chain{Name: rungChainName(m, n), Rules: []nft.Rule{o.rung(m, n)}})
		}
	}
	return out
}

// rung is the rule that picks from kind m's map of the lists of rung.
func (o Options) rung(m, n int) nft.Rule {
	if n == hashRung {
		return o.hashRung(m)
	}
	return rule(nft.DNATMap{Keys: listKeys[m], Num: nft.Numgen{Mod: uint32(n)}, Map: listMapName(m, n)})
}

// pickChains are the chains that pick from each kind of endpoint map,
// and listKeys the packet fields their entries are keyed by.
var (
	pickChains = [...]string{nft.ChainPickEndpoint, nft.ChainPickLocalEndpoint, nft.ChainPickNodePortEndpoint, nft.ChainPickNodePortLocalEndpoint}
	listKeys   = [...][]nft.Field{daddrProtoPort, daddrProtoPort, protoPort, protoPort}
)
