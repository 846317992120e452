package trace

import (
	"math/big"

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
		return nft.Value{Num: uint32(t.proto)}, nft.TypeInetProto, nil
	case nft.Dport:
		return nft.Value{Num: uint32(w.dport)}, nft.TypeInetService, nil
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

// inSet matches when the concatenated key is an element of the set (or
// map). A numgen part that can draw several numbers (Mod > 1) makes the
// match random: hit holds the shares of w whose draw is found, miss the
// rest, which goes on with the next rule.
func (t *tracer) inSet(at loc, m nft.InSet, w *walker) (hit, miss []*walker, err error) {
	s, err := t.set(at, m.Set, false)
	if err != nil {
		return nil, nil, err
	}
	key, err := t.key(at, s, m.Keys, m.Num, w)
	if err != nil {
		return nil, nil, err
	}
	hit, miss = t.draw(s, key, m.Num, w)
	return hit, miss, nil
}

// set returns the named set, which must be a verdict map when isVmap.
func (t *tracer) set(at loc, name string, isVmap bool) (*nft.Set, error) {
	s := t.table.Set(name)
	switch {
	case s == nil:
		return nil, at.errorf("no such set %q", name)
	case isVmap && (!s.Map || len(s.Data) > 0):
		return nil, at.errorf("vmap on set %q, which is not a verdict map", name)
	}
	return s, nil
}

// lookup finds w's concatenated key in the named set; isMap requires a
// verdict map. Keys must match the set's type part by part, as nft checks
// when it loads the rule.
func (t *tracer) lookup(at loc, name string, keys []nft.Field, w *walker, isMap bool) (nft.Element, bool, error) {
	s, err := t.set(at, name, isMap)
	if err != nil {
		return nft.Element{}, false, err
	}
	key, err := t.key(at, s, keys, nft.Numgen{}, w)
	if err != nil {
		return nft.Element{}, false, err
	}
	e, found := t.find(s, key)
	return e, found, nil
}

// find returns the element of s whose key matches key.
func (t *tracer) find(s *nft.Set, key []nft.Value) (nft.Element, bool) {
	if !s.Interval {
		i, ok := t.index(s)[s.KeyText(key)]
		if !ok {
			return nft.Element{}, false
		}
		return s.Elements[i], true
	}
	for _, e := range s.Elements {
		if keyMatches(e.Key, key) {
			return e, true
		}
	}
	return nft.Element{}, false
}

// index returns the elements of s by key text, built once per trace: a
// live table's endpoint maps hold hundreds of thousands of elements.
func (t *tracer) index(s *nft.Set) map[string]int {
	if idx, ok := t.indexes[s]; ok {
		return idx
	}
	idx := make(map[string]int, len(s.Elements))
	for i, e := range s.Elements {
		idx[s.KeyText(e.Key)] = i
	}
	if t.indexes == nil {
		t.indexes = map[*nft.Set]map[string]int{}
	}
	t.indexes[s] = idx
	return idx
}

// draw looks up key followed by every number n can draw, each equally
// likely. hit holds one walker per number found, each with its element in
// w.found; miss is what is left of w (nil when every draw was found).
func (t *tracer) draw(s *nft.Set, key []nft.Value, n nft.Numgen, w *walker) (hit []*walker, miss []*walker) {
	if !n.Used() {
		return t.findOne(s, key, w)
	}
	share := new(big.Rat).Mul(w.prob, big.NewRat(1, int64(n.Mod)))
	missed := 0
	for i := range n.Mod {
		k := append(append([]nft.Value(nil), key...), nft.Value{Num: n.Offset + i})
		e, found := t.find(s, k)
		if !found {
			missed++
			continue
		}
		h := w.copyWith(share)
		h.saw(s.Name, e)
		hit = append(hit, h)
	}
	if missed == 0 {
		return hit, nil
	}
	w.prob = new(big.Rat).Mul(share, big.NewRat(int64(missed), 1))
	w.end = next
	return hit, []*walker{w}
}

// mergeSlots merges the walkers of slots that hold the same endpoint into
// the first of them, with their probabilities added: without a source port
// a Maglev table is its endpoints' shares, not one outcome per slot.
func mergeSlots(s *nft.Set, hit []*walker) []*walker {
	var out []*walker
	by := map[string]*walker{}
	for _, h := range hit {
		k := s.DataText(h.found.Data)
		if first, ok := by[k]; ok {
			first.prob = new(big.Rat).Add(first.prob, h.prob)
			continue
		}
		by[k] = h
		out = append(out, h)
	}
	return out
}

// hashed looks up key followed by the hash of w's connection: the one
// slot the kernel computes for it.
func (t *tracer) hashed(s *nft.Set, key []nft.Value, h nft.Jhash, w *walker) (hit, miss []*walker) {
	p := Packet{Saddr: t.saddr, Daddr: w.daddr, Proto: t.proto, Dport: w.dport, Sport: t.sport}
	k := append(append([]nft.Value(nil), key...), nft.Value{Num: HashValue(h, p)})
	return t.findOne(s, k, w)
}

// findOne looks up key in s for w alone: w is the hit, having seen the
// element it found, or the miss, which goes on with the next rule.
func (t *tracer) findOne(s *nft.Set, key []nft.Value, w *walker) (hit, miss []*walker) {
	e, found := t.find(s, key)
	if !found {
		w.end = next
		return nil, []*walker{w}
	}
	w.saw(s.Name, e)
	return []*walker{w}, nil
}

// key builds w's key for set s: the fields, then the numgen part (its
// number is added by draw), each of the type the set wants.
func (t *tracer) key(at loc, s *nft.Set, keys []nft.Field, n nft.Numgen, w *walker) ([]nft.Value, error) {
	parts := len(keys)
	if n.Used() {
		parts++
	}
	if parts != len(s.Key) {
		return nil, at.errorf("%d key parts for set %q of type %s", parts, s.Name, s.TypeText())
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
	if n.Used() && s.Key[len(keys)] != nft.TypeInteger {
		return nil, at.errorf("key part %d is a numgen integer, set %q wants %s", len(keys), s.Name, s.Key[len(keys)])
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
		t.step(at, w)
		w.masq, w.natDone[manipSrc], w.end = true, true, accept
	default:
		t.step(at, w)
		w.end = reject
	}
	return []*walker{w}, nil
}

// dnatMap rewrites the destination to what a data map holds for the
// packet's key and a numgen draw; a draw whose key the map lacks goes on
// with the next rule.
func (t *tracer) dnatMap(at loc, d nft.DNATMap, w *walker) ([]*walker, error) {
	if err := t.checkDNAT(at); err != nil {
		return nil, err
	}
	s, err := t.set(at, d.Map, false)
	if err != nil {
		return nil, err
	}
	addrType := nft.AddrType(t.table.Family)
	if !s.Map || len(s.Data) != 2 || s.Data[0] != addrType || s.Data[1] != nft.TypeInetService {
		return nil, at.errorf("dnat from map %q, which does not map to %s . inet_service", d.Map, addrType)
	}
	num := d.Num
	if d.Hash.Used() {
		// Without a source port every slot is as likely as any other.
		num = nft.Numgen{Mod: d.Hash.Mod, Offset: d.Hash.Offset}
	}
	key, err := t.key(at, s, d.Keys, num, w)
	if err != nil {
		return nil, err
	}
	var hit, miss []*walker
	if d.Hash.Used() && t.sport != 0 {
		hit, miss = t.hashed(s, key, d.Hash, w)
	} else {
		hit, miss = t.draw(s, key, num, w)
	}
	if d.Hash.Used() && t.sport == 0 {
		hit = mergeSlots(s, hit)
	}
	for _, h := range hit {
		t.step(at, h)
		h.daddr, h.dport = h.found.Data[0].Addr, uint16(h.found.Data[1].Num)
		h.natDone[manipDst], h.end = true, accept
	}
	return append(hit, miss...), nil
}

// checkDNAT fails unless the rule is in a chain that may DNAT.
func (t *tracer) checkDNAT(at loc) error {
	if t.baseChain.Type != "nat" || (t.baseChain.Hook != "prerouting" && t.baseChain.Hook != "output") {
		return at.errorf("dnat in a %s %s chain: only nat prerouting and output allow it", t.baseChain.Type, t.baseChain.Hook)
	}
	return nil
}

// dnat rewrites the destination. Its `meta l4proto` restatement is a match:
// a packet of another protocol does not match the rule.
func (t *tracer) dnat(at loc, d nft.DNAT, w *walker) ([]*walker, error) {
	if err := t.checkDNAT(at); err != nil {
		return nil, err
	}
	if !d.Addr.IsValid() || nft.FamilyOf(d.Addr) != t.table.Family {
		return nil, at.errorf("dnat to %s in a table of family %s", d.Addr, t.table.Family)
	}
	if t.proto != d.Proto {
		w.end = next
		return []*walker{w}, nil
	}
	t.step(at, w)
	w.daddr, w.dport = d.Addr, d.Port
	w.natDone[manipDst], w.end = true, accept
	return []*walker{w}, nil
}
