package trace

import (
	"net/netip"

	"github.com/nftproxy/nftproxy/nft"
)

// Dynamic sets (session-affinity memory) are traced as the table holds
// them: a test that wants a client "remembered" adds the element to the
// table first (Remember). Updates do not change the table, since a trace
// follows one packet.

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
	_, err := t.key(at, s, u.Keys, u.Num, w)
	return err
}

// Remember adds to table t's affinity set what the packet path records
// when it sends client to endpoint ep: an element for the ID of ep in
// every rule that recalls it (one per Service port with ep as endpoint).
func Remember(t *nft.Table, client netip.Addr, ep netip.AddrPort) {
	s := t.Set("affinity")
	for _, c := range t.Chains {
		for _, r := range c.Rules {
			if id, ok := recalls(r, ep); ok {
				s.Elements = append(s.Elements, nft.Element{Key: []nft.Value{{Addr: client}, {Num: id}}})
			}
		}
	}
}

// recalls returns the ID of the affinity lookup in r when r is a recall
// rule that sends a remembered client to ep.
func recalls(r nft.Rule, ep netip.AddrPort) (uint32, bool) {
	if len(r.Stmts) != 3 {
		return 0, false
	}
	in, ok1 := r.Stmts[0].(nft.InSet)
	d, ok2 := r.Stmts[2].(nft.DNAT)
	if !ok1 || !ok2 || in.Set != "affinity" || !in.Num.Used() || netip.AddrPortFrom(d.Addr, d.Port) != ep {
		return 0, false
	}
	return in.Num.Offset, true
}
