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
// set must exist, be dynamic, and the key must fit its type.
func (t *tracer) checkUpdate(at loc, u nft.UpdateSet, w *walker) error {
	s := t.table.Set(u.Set)
	switch {
	case s == nil:
		return at.errorf("update of no such set %q", u.Set)
	case !s.Dynamic:
		return at.errorf("update of set %q, which is not dynamic", u.Set)
	}
	_, err := t.key(at, s, u.Keys, u.Consts, w)
	return err
}

// inSetWith matches when the key, constants included, is an element.
func (t *tracer) inSetWith(at loc, m nft.InSetWith, w *walker) (bool, error) {
	_, found, err := t.lookupWith(at, m.Set, m.Keys, m.Consts, w, false)
	return found, err
}

// constType is the data type of a constant key part.
func (t *tracer) constType(v nft.Value) nft.DataType {
	if v.Addr.IsValid() {
		if nft.FamilyOf(v.Addr) != t.table.Family {
			return "address of another family"
		}
		return nft.AddrType(t.table.Family)
	}
	return nft.TypeInetService
}

// Remember adds to table t's affinity set the element that records
// client's choice of endpoint ep for a Service address, protocol and port,
// as the packet path would.
func Remember(t *nft.Table, client, service netip.Addr, proto uint8, port uint16, ep netip.Addr) {
	key := []nft.Value{{Addr: client}, {Addr: service}, {Num: uint16(proto)}, {Num: port}, {Addr: ep}}
	s := t.Set("affinity")
	s.Elements = append(s.Elements, nft.Element{Key: key})
}
