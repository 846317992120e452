package trace

import (
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
)

// Dynamic sets (session-affinity memory) are traced as the table holds
// them: a test that wants a client "remembered" adds the element to the
// table first. Updates do not change the table, since a trace follows one
// packet.

// keyMatches compares a packet's key with an element's: a prefix part of an
// interval set matches the addresses it contains.
func keyMatches(elem, key []nft.Value) bool {
	if len(elem) != len(key) {
		return false
	}
	for i, v := range elem {
		if v.Prefix.IsValid() {
			if !v.Prefix.Contains(key[i].Addr) {
				return false
			}
			continue
		}
		if v != key[i] {
			return false
		}
	}
	return true
}

// checkUpdate checks an update statement as the kernel does on load: the
// set must exist and be dynamic.
func (t *tracer) checkUpdate(at loc, u nft.UpdateSet) error {
	s := t.table.Set(u.Set)
	switch {
	case s == nil:
		return at.errorf("update of no such set %q", u.Set)
	case !s.Dynamic:
		return at.errorf("update of set %q, which is not dynamic", u.Set)
	case len(u.Keys) != len(s.Key) || len(u.Data) != len(s.Data):
		return at.errorf("update of %q with %d key and %d data parts, want %d and %d", u.Set, len(u.Keys), len(u.Data), len(s.Key), len(s.Data))
	}
	return nil
}

// dnatMap rewrites the destination to the address and port the map holds
// for w; without an element the rule ends, like a failed match.
func (t *tracer) dnatMap(at loc, d nft.DNATMap, w *walker) ([]*walker, error) {
	elem, found, err := t.lookup(at, d.Map, d.Keys, w, false)
	if err != nil || !found {
		w.end = next
		return []*walker{w}, err
	}
	if len(elem.Data) != 2 {
		return nil, at.errorf("dnat from map %q: element without address and port", d.Map)
	}
	return t.dnat(at, nft.DNAT{Proto: t.proto, Addr: elem.Data[0].Addr, Port: elem.Data[1].Num}, w)
}

// Remember adds to table t's affinity map and set the elements that record
// client's choice of ep for a Service address, as the packet path would.
func Remember(t *nft.Table, client, service netip.Addr, proto uint8, port uint16, ep netip.AddrPort) {
	key := []nft.Value{{Addr: client}, {Addr: service}, {Num: uint16(proto)}, {Num: port}}
	m, s := t.Set("affinity"), t.Set("affinity-clients")
	m.Elements = append(m.Elements, nft.Element{Key: key, Data: []nft.Value{{Addr: ep.Addr()}, {Num: ep.Port()}}})
	s.Elements = append(s.Elements, nft.Element{Key: key})
}
