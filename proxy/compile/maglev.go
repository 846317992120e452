package compile

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Maglev consistent hashing (Eisenbud et al., NSDI 2016): a Service port
// that uses it brings, instead of its n endpoints, a lookup table of M
// slots into its kind's maglev map (endpoints-maglev), slot j at index j.
// The hash rung hashes the connection into a slot, so a connection
// reaches the same endpoint on every node whose table has the same
// endpoints, and removing one of n endpoints moves about 1/n of the
// connections (the slots it held) when M is much larger than n.
//
// The slots are data-map elements, like the lists of Services that pick at
// random: an endpoint change is elements only, and the one rung is bound to
// the map once, whatever the number of such Services.

// MaxMaglevTableSize is the largest prime below 2^16. Maglev moves about
// 1/n of the connections when M is over 100 times the n endpoints, and
// every slot is an element of every node's table: a larger M only costs
// kernel memory.
const MaxMaglevTableSize = 65521

// LoadBalancing algorithms: how a Service port picks an endpoint for a new
// connection.
const (
	LoadBalancingRandom = "random"
	LoadBalancingMaglev = "maglev"
)

// usesMaglev reports whether svc's ports use Maglev: its annotation, or
// the configured default without one. An unknown annotation value is
// reported and the default is used.
func (c *compiler) usesMaglev(svc *model.Service) bool {
	switch svc.LoadBalancing {
	case "":
		return c.opts.LoadBalancing == LoadBalancingMaglev
	case LoadBalancingRandom, LoadBalancingMaglev:
		return svc.LoadBalancing == LoadBalancingMaglev
	}
	c.problem(svc, "metadata.annotations["+model.AnnotationLoadBalancing+"]",
		fmt.Sprintf("unsupported value %q (supported: random, maglev): using %s", svc.LoadBalancing, c.opts.loadBalancing()))
	return c.opts.LoadBalancing == LoadBalancingMaglev
}

// maglevTable fills m slots from eps, which must be sorted (candidates
// sorts them) so that every node that has the same endpoints fills the same
// table. Each endpoint's permutation of the slots comes from two hashes of
// its address and port, never from anything local to the node; endpoints
// take turns, each taking the next free slot of its permutation, until
// every slot is taken.
func maglevTable(eps []endpoint, m uint32) []endpoint {
	if len(eps) == 0 {
		return nil
	}
	slots := make([]endpoint, m)
	taken := make([]bool, m)
	offset, skip, next := make([]uint32, len(eps)), make([]uint32, len(eps)), make([]uint32, len(eps))
	for i, ep := range eps {
		offset[i] = uint32(endpointHash(ep, 0) % uint64(m))
		skip[i] = uint32(endpointHash(ep, 1)%uint64(m-1)) + 1
	}
	for filled := uint32(0); ; {
		for i := range eps {
			c := (offset[i] + uint32((uint64(next[i])*uint64(skip[i]))%uint64(m))) % m
			for taken[c] {
				next[i]++
				c = (offset[i] + uint32((uint64(next[i])*uint64(skip[i]))%uint64(m))) % m
			}
			taken[c], slots[c] = true, eps[i]
			next[i]++
			if filled++; filled == m {
				return slots
			}
		}
	}
}

// endpointHash is FNV-1a of a salt byte, the endpoint's address (16 bytes,
// IPv4 mapped) and its port: the same on every node and every build.
func endpointHash(ep endpoint, salt byte) uint64 {
	h := fnv.New64a()
	a := ep.addr.As16()
	var b [1 + 16 + 2]byte
	b[0] = salt
	copy(b[1:], a[:])
	binary.BigEndian.PutUint16(b[17:], ep.port)
	h.Write(b[:])
	return h.Sum64()
}

// hashFields are the fields a hash rung hashes, by endpoint map: the
// connection's addresses and ports; for NodePorts without the destination
// address, which is each node's own, so that a connection moved from one
// node's NodePort to another's still hashes alike.
var hashFields = [...][]nft.Field{
	{nft.Saddr, nft.Sport, nft.Daddr, nft.Dport}, {nft.Saddr, nft.Sport, nft.Daddr, nft.Dport},
	{nft.Saddr, nft.Sport, nft.Dport}, {nft.Saddr, nft.Sport, nft.Dport},
}

// hashRung is the rung that picks from kind m's maglev map by the hash of
// the connection.
func (o Options) hashRung(m int) nft.Rule {
	mg := o.maglev()
	return rule(nft.DNATMap{Keys: listKeys[m], Map: listMapName(m, hashRung),
		Hash: nft.Jhash{Fields: hashFields[m], Mod: mg.TableSize, Seed: mg.Seed}})
}
