package compile

import (
	"github.com/nftproxy/nftproxy/nft"
)

// Table returns family f's whole desired table, or nil when neither the
// node nor any Service uses the family. Unlike Ruleset's, its elements come
// in no particular order: sorting the 190,000 elements of 10,000 Services
// by their text costs a quarter of a second, which a table rebuilt after
// somebody deleted it does not need.
func (c *Tables) Table(f nft.Family) *nft.Table {
	fi := familyIndex(f)
	if !c.fams[fi].used() {
		return nil
	}
	return c.assemble(fi)
}

// Part returns what family f's desired table holds of some objects, for a
// repair of those alone: every set's definition, each holding only its
// desired elements among the keys listed for it in keys, and the desired
// chains among those named in chains, with their rules. Objects that are
// not desired are left out; elements come in no particular order. It
// returns nil when the family has no desired table.
//
// It looks each object up where the table is assembled from (see table),
// so its cost grows with the objects named, not with the table: a repair
// never assembles the whole table.
func (c *Tables) Part(f nft.Family, keys map[string][][]nft.Value, chains []string) *nft.Table {
	fi := familyIndex(f)
	fs := c.fams[fi]
	if !fs.used() {
		return nil
	}
	t := partialTable(f)
	t.Sets = append(t.Sets, fs.rungs.sets(f)...)
	lists := map[*claim][]endpointList{}
	for name, ks := range keys {
		s := t.Set(name)
		switch {
		case s == nil:
			continue
		case s.Interval:
			fs.intervalElements(s, ks)
			continue
		}
		s.Elements = make([]nft.Element, 0, len(ks))
		for _, k := range ks {
			if e, ok := c.element(fi, name, k, lists); ok {
				s.Elements = append(s.Elements, e)
			}
		}
	}
	if len(chains) > 0 {
		idx := c.chainIndex(fi)
		for _, name := range chains {
			if ch := idx[name]; ch != nil {
				t.Chains = append(t.Chains, ch)
			}
		}
	}
	return t
}

// element returns the desired element of set with key, if any: from the
// node's addresses, an endpoint list, or a shared or winning claim, as
// table adds them. lists caches the endpoint lists unpacked so far.
func (c *Tables) element(fi int, set string, key []nft.Value, lists map[*claim][]endpointList) (nft.Element, bool) {
	fs := c.fams[fi]
	if set == nft.SetNodePortIPs {
		return c.nodePortIP(fs.family, key)
	}
	if m, rung, ok := parseListMap(set); ok {
		return fs.listElement(m, rung, key, lists)
	}
	k := packKey(set, key)
	if se := fs.shared[k]; se != nil && se.count > 0 && se.claim.set == set {
		return se.claim.element(), true
	}
	if ct := fs.contests[k]; ct != nil && ct.winner != nil && ct.winner.set == set {
		return ct.winner.element(), true
	}
	return nft.Element{}, false
}

// intervalElements adds to interval set s its desired elements among
// keys, matched by their text: the kernel hands every address part of an
// interval element back as a prefix, where the compiler writes a single
// address as an address (the load-balancer IP of firewall-allow). Such a
// set holds a handful of elements; finding them walks the claims once, or
// the ServiceCIDRs' prefixes for service-cidrs.
func (fs *familyState) intervalElements(s *nft.Set, keys [][]nft.Value) {
	asked := make(map[string]bool, len(keys))
	for _, k := range keys {
		asked[s.KeyText(k)] = true
	}
	add := func(cl *claim) {
		if e := cl.element(); cl.set == s.Name && asked[s.KeyText(e.Key)] {
			s.Elements = append(s.Elements, e)
		}
	}
	if s.Name == nft.SetServiceCIDRs {
		for _, e := range fs.cidrs {
			if asked[s.KeyText(e.Key)] {
				s.Elements = append(s.Elements, e)
			}
		}
		return
	}
	for _, se := range fs.shared {
		if se.count > 0 {
			add(se.claim)
		}
	}
	for _, ct := range fs.contests {
		if ct.winner != nil {
			add(ct.winner)
		}
	}
}

func (c *Tables) nodePortIP(f nft.Family, key []nft.Value) (nft.Element, bool) {
	if len(key) != 1 {
		return nft.Element{}, false
	}
	for _, ip := range c.opts.nodePortIPs(c.node, f) {
		if ip == key[0].Addr {
			return nft.Element{Key: []nft.Value{{Addr: ip}}}, true
		}
	}
	return nft.Element{}, false
}

// listElement returns the element with key (an entry's key and an index)
// of kind m's map of the lists of rung: the endpoint at that index of the
// list of that rung the entry's winning claim brings.
func (fs *familyState) listElement(m, rung int, key []nft.Value, lists map[*claim][]endpointList) (nft.Element, bool) {
	if len(key) < 2 {
		return nft.Element{}, false
	}
	entry, idx := key[:len(key)-1], key[len(key)-1].Num
	ct := fs.contests[packKey(entrySets[m], entry)]
	if ct == nil || ct.winner == nil || ct.winner.lists == "" {
		return nft.Element{}, false
	}
	ls, ok := lists[ct.winner]
	if !ok {
		ls = unpackLists(ct.winner.lists)
		lists[ct.winner] = ls
	}
	for _, l := range ls {
		if l.m == m && l.rung() == rung && idx < uint32(len(l.eps)) {
			return listElement(unpackKey(ct.winner.set, ct.winner.key), l, int(idx)), true
		}
	}
	return nft.Element{}, false
}

// entrySets are the maps whose entries bring the lists of each kind of
// endpoint map.
var entrySets = [...]string{nft.MapServiceIPs, nft.MapServiceIPs, nft.MapServiceNodePorts, nft.MapServiceNodePorts}

// chainIndex returns family fi's desired chains by name: the skeleton's,
// the pick chains and the Services' own.
func (c *Tables) chainIndex(fi int) map[string]*nft.Chain {
	fs := c.fams[fi]
	idx := map[string]*nft.Chain{}
	for _, ch := range skeleton(fs.family, c.opts).Chains {
		idx[ch.Name] = ch
	}
	for _, ch := range fs.rungs.chains(c.opts) {
		idx[ch.Name] = ch
	}
	for _, u := range c.units {
		for _, ch := range u.families[fi].chains {
			idx[ch.Name] = ch
		}
	}
	return idx
}
