package trace

import (
	"github.com/nftproxy/nftproxy/nft"
)

// field returns the value of f in w, as a set key part, and its data type.
func (t *tracer) field(at loc, f nft.Field, w *walker) (nft.Value, nft.DataType, error) {
	addrType := nft.AddrType(t.table.Family)
	switch f {
	case nft.Saddr:
		return nft.Value{Addr: t.saddr}, addrType, nil
	case nft.Daddr:
		return nft.Value{Addr: w.daddr}, addrType, nil
	case nft.L4Proto:
		return nft.Value{Num: uint16(t.proto)}, nft.TypeInetProto, nil
	case nft.Dport:
		return nft.Value{Num: w.dport}, nft.TypeInetService, nil
	}
	return nft.Value{}, "", at.errorf("unknown field %d", f)
}

// matchAddr matches an address against a prefix. A prefix of the other
// family is an error: nft refuses it in a table of one family.
func (t *tracer) matchAddr(at loc, m nft.MatchAddr, w *walker) (bool, error) {
	if m.Field != nft.Saddr && m.Field != nft.Daddr {
		return false, at.errorf("address match on field %d", m.Field)
	}
	if !m.Prefix.IsValid() || nft.FamilyOf(m.Prefix.Addr()) != t.table.Family {
		return false, at.errorf("prefix %s in a table of family %s", m.Prefix, t.table.Family)
	}
	v, _, _ := t.field(at, m.Field, w)
	return m.Prefix.Contains(v.Addr) != m.Neg, nil
}

// inSet matches when the concatenated key is an element of the set (or map).
func (t *tracer) inSet(at loc, m nft.InSet, w *walker) (bool, error) {
	_, found, err := t.lookup(at, m.Set, m.Keys, w, false)
	return found, err
}

// lookup finds w's concatenated key in the named set; isMap requires a
// verdict map. Keys must match the set's type part by part, as nft checks
// when it loads the rule.
func (t *tracer) lookup(at loc, name string, keys []nft.Field, w *walker, isMap bool) (nft.Element, bool, error) {
	return t.lookupWith(at, name, keys, nil, w, isMap)
}

// lookupWith is lookup with constant parts after the fields.
func (t *tracer) lookupWith(at loc, name string, keys []nft.Field, consts []nft.Value, w *walker, isMap bool) (nft.Element, bool, error) {
	s := t.table.Set(name)
	switch {
	case s == nil:
		return nft.Element{}, false, at.errorf("no such set %q", name)
	case isMap && !s.Map:
		return nft.Element{}, false, at.errorf("vmap on set %q, which is not a map", name)
	}
	key, err := t.key(at, s, keys, consts, w)
	if err != nil {
		return nft.Element{}, false, err
	}
	for _, e := range s.Elements {
		if keyMatches(e.Key, key) {
			return e, true, nil
		}
	}
	return nft.Element{}, false, nil
}

// key builds w's key for set s: the fields, then the constants, each of
// the type the set wants.
func (t *tracer) key(at loc, s *nft.Set, keys []nft.Field, consts []nft.Value, w *walker) ([]nft.Value, error) {
	if len(keys)+len(consts) != len(s.Key) {
		return nil, at.errorf("%d key fields for set %q of type %s", len(keys)+len(consts), s.Name, s.TypeText())
	}
	key := make([]nft.Value, 0, len(s.Key))
	for i, f := range keys {
		v, typ, err := t.field(at, f, w)
		if err != nil {
			return nil, err
		}
		if typ != s.Key[i] {
			return nil, at.errorf("key part %d is %s, set %q wants %s", i, typ, s.Name, s.Key[i])
		}
		key = append(key, v)
	}
	for i, v := range consts {
		if typ := t.constType(v); typ != s.Key[len(keys)+i] {
			return nil, at.errorf("key part %d is %s, set %q wants %s", len(keys)+i, typ, s.Name, s.Key[len(keys)+i])
		}
		key = append(key, v)
	}
	return key, nil
}

// terminal evaluates the statements that end a rule's evaluation with a
// verdict of their own: dnat and masquerade accept (the kernel's nat
// expression returns NF_ACCEPT), reject drops after answering.
func (t *tracer) terminal(at loc, s nft.Stmt, w *walker) ([]*walker, error) {
	switch s := s.(type) {
	case nft.DNAT:
		return t.dnat(at, s, w)
	case nft.Masquerade:
		if t.baseChain.Type != "nat" || t.baseChain.Hook != "postrouting" {
			return nil, at.errorf("masquerade in a %s %s chain: only nat postrouting allows it", t.baseChain.Type, t.baseChain.Hook)
		}
		w.masq, w.natDone[manipSrc], w.end = true, true, accept
	default:
		w.end = reject
	}
	return []*walker{w}, nil
}

// dnat rewrites the destination. Its `meta l4proto` restatement is a match:
// a packet of another protocol does not match the rule.
func (t *tracer) dnat(at loc, d nft.DNAT, w *walker) ([]*walker, error) {
	if t.baseChain.Type != "nat" || (t.baseChain.Hook != "prerouting" && t.baseChain.Hook != "output") {
		return nil, at.errorf("dnat in a %s %s chain: only nat prerouting and output allow it", t.baseChain.Type, t.baseChain.Hook)
	}
	if !d.Addr.IsValid() || nft.FamilyOf(d.Addr) != t.table.Family {
		return nil, at.errorf("dnat to %s in a table of family %s", d.Addr, t.table.Family)
	}
	if t.proto != d.Proto {
		w.end = next
		return []*walker{w}, nil
	}
	w.daddr, w.dport = d.Addr, d.Port
	w.natDone[manipDst], w.end = true, accept
	return []*walker{w}, nil
}
