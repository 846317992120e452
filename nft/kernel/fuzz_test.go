package kernel

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// The kernel's messages are outside input: read back (rules, elements,
// sets, chains) from tables anybody with CAP_NET_ADMIN may have changed,
// and announced (notifications) for every transaction of anybody's. Each
// target feeds one decoder arbitrary message bytes, seeded with the
// messages we write ourselves (and testdata/fuzz/FuzzX/). Whatever the
// bytes, decoding returns, and what it decodes as ours is what our encoder
// writes back: the differ compares decoded tables with compiled ones.

// familyOfBit picks the family of a fuzz input.
func familyOfBit(ipv6 bool) nft.Family {
	if ipv6 {
		return nft.IPv6
	}
	return nft.IPv4
}

// FuzzRule fuzzes the decoding of a NEWRULE message of a dump: a rule
// decoded without a Foreign statement encodes and decodes to itself.
func FuzzRule(f *testing.F) {
	for _, fam := range nft.Families {
		for _, s := range stmtCases(fam) {
			f.Add(fam == nft.IPv6, ruleMessage(f, fam, nft.Rule{Stmts: []nft.Stmt{s}, Comment: "seed"}))
		}
	}
	f.Fuzz(func(t *testing.T, ipv6 bool, data []byte) {
		fam := familyOfBit(ipv6)
		_, exprs, ud, err := parseRule(byte(tableOf(fam).Family), data)
		if err != nil {
			return
		}
		r := decodeRule(fam, exprs, ud)
		text := r.Text(fam)
		for _, s := range r.Stmts {
			if _, ok := s.(nft.Foreign); ok {
				return // rewritten by the next sync, never mistaken for ours
			}
		}
		if got := roundTripRule(t, fam, "c", r); !reflect.DeepEqual(r, got) {
			t.Fatalf("%s: decoded as\n\t%s\nencodes and decodes to\n\t%s", fam, text, got.Text(fam))
		}
	})
}

// ruleMessage is the NEWRULE message payload we write for r.
func ruleMessage(tb testing.TB, f nft.Family, r nft.Rule) []byte {
	var w batchWriter
	if err := w.rule(f, "c", r); err != nil {
		tb.Fatal(err)
	}
	return batchPayloads(tb, &w)[0]
}

// batchPayloads returns the payloads of the operation messages w holds.
func batchPayloads(tb testing.TB, w *batchWriter) [][]byte {
	bufs, _ := w.seal(0, 1)
	msgs := parseBatch(tb, bytes.Join(bufs, nil))
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs[1 : len(msgs)-1] { // without the batch's begin and end
		out = append(out, m.Data)
	}
	return out
}

// FuzzElements fuzzes the decoding of an element message (a dump of a
// set's elements, or an announcement) against every key and data type we
// program: an element of a set without intervals whose key and data have
// the lengths of the set's types (the kernel refuses others) encodes and
// decodes to the same element text, which is what the differ compares.
func FuzzElements(f *testing.F) {
	cases := elementCases()
	for i, tc := range cases {
		var w batchWriter
		w.elements(newSetElemType, tc.f, &tc.set, []nft.Element{tc.elem})
		f.Add(uint8(i), batchPayloads(f, &w)[0])
	}
	f.Fuzz(func(t *testing.T, pick uint8, data []byte) {
		tc := cases[int(pick)%len(cases)]
		elems, err := appendElements(nil, data)
		if err != nil {
			return
		}
		for _, e := range elems {
			d := decodeElement(&tc.set, e)
			text := tc.set.ElementText(d)
			if tc.set.Interval || !sameLengths(tc, e) {
				continue // ranges are paired across elements (element_range.go)
			}
			var w batchWriter
			w.elements(newSetElemType, tc.f, &tc.set, []nft.Element{d})
			back, err := appendElements(nil, batchPayloads(t, &w)[0])
			if err != nil || len(back) != 1 {
				t.Fatalf("%s: %q: encoded again: %d elements, %v", tc.name, text, len(back), err)
			}
			if got := tc.set.ElementText(decodeElement(&tc.set, back[0])); got != text {
				t.Fatalf("%s: decoded as %q, encodes and decodes to %q", tc.name, text, got)
			}
		}
	})
}

// sameLengths reports whether e's key, and data in a data map, are as long
// as those of tc's element.
func sameLengths(tc elementCase, e nftables.SetElement) bool {
	if len(e.Key) != len(encodeKey(tc.set.Key, tc.elem.Key)) {
		return false
	}
	return !tc.set.Map || len(tc.set.Data) == 0 || len(e.Val) == len(encodeKey(tc.set.Data, tc.elem.Data))
}

// FuzzSet fuzzes the decoding of a NEWSET message of a dump, through
// google/nftables' GetSets as Read does, with its userdata as setUserdata
// reads it: a typeof declaration decoded as ours encodes to itself.
func FuzzSet(f *testing.F) {
	tbl := tableOf(nft.IPv4)
	for _, s := range fuzzSets() {
		msgs := marshal(f, func(c *nftables.Conn) error { return c.AddSet(newSet(tbl, &s), nil) })
		data := msgs[0].Data
		if typeof, err := typeofUdata(nft.IPv4, &s); err == nil && typeof != nil {
			data, _ = withUserdata(data, typeof)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := netlink.Message{Header: netlink.Header{Type: unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWSET}, Data: data}
		sets, err := getSets(replying(t, []netlink.Message{m}), tbl)
		if err != nil {
			return
		}
		if len(data) < 4 {
			if len(sets) > 0 {
				t.Fatalf("GetSets decoded %d sets from %d bytes", len(sets), len(data))
			}
			return
		}
		var ud []byte
		_ = walkAttrs(data[4:], func(typ uint16, payload []byte) error {
			if typ == unix.NFTA_SET_USERDATA {
				ud = payload
			}
			return nil
		})
		for _, ks := range sets {
			s := decodeSet(nft.IPv4, ks, ud)
			_ = s.TypeText()
			checkTypeof(t, s)
		}
	})
}

// checkTypeof checks that a typeof declaration decoded as ours is what we
// write for it.
func checkTypeof(t *testing.T, s *nft.Set) {
	t.Helper()
	if len(s.Typeof) == 0 || strings.HasSuffix(string(s.Key[len(s.Key)-1]), "unknown typeof") {
		return
	}
	ud, err := typeofUdata(nft.IPv4, s)
	if err != nil {
		t.Fatalf("typeof %v : %v decoded, does not encode: %v", s.Typeof, s.DataTypeof, err)
	}
	key, data, ok := decodeTypeof(nft.IPv4, ud, s.Map)
	if !ok || !reflect.DeepEqual(key, s.Typeof) || !reflect.DeepEqual(data, s.DataTypeof) {
		t.Fatalf("typeof %v : %v encodes and decodes to %v : %v (%v)", s.Typeof, s.DataTypeof, key, data, ok)
	}
}

// fuzzSets are definitions of each kind of set and map we make.
func fuzzSets() []nft.Set {
	svc4 := []nft.DataType{nft.TypeIPv4Addr, nft.TypeInetProto, nft.TypeInetService}
	return []nft.Set{
		{Name: "cluster-ips", Key: []nft.DataType{nft.TypeIPv4Addr}, Comment: "Active ClusterIPs"},
		{Name: "service-ips", Map: true, Key: svc4},
		{Name: "firewall-allow", Interval: true, Key: append(svc4, nft.TypeIPv4Addr)},
		{Name: "endpoints", Map: true, Key: append(svc4, nft.TypeInteger), Data: []nft.DataType{nft.TypeIPv4Addr, nft.TypeInetService},
			Typeof: []nft.Field{nft.Daddr, nft.L4Proto, nft.Dport, nft.Number}, DataTypeof: []nft.Field{nft.Daddr, nft.Dport}},
		{Name: "affinity", Dynamic: true, Size: 1 << 20, Key: []nft.DataType{nft.TypeIPv4Addr, nft.TypeInteger},
			Typeof: []nft.Field{nft.Saddr, nft.Number}},
	}
}

// FuzzChain fuzzes the decoding of a NEWCHAIN message of a dump, through
// google/nftables' ListChainsOfTableFamily as Read does: a base chain
// decoded with a hook we use encodes and decodes to itself.
func FuzzChain(f *testing.F) {
	tbl := tableOf(nft.IPv6)
	for _, c := range fuzzChains() {
		msgs := marshal(f, func(conn *nftables.Conn) error {
			conn.AddChain(newChain(tbl, &c))
			return nil
		})
		f.Add(msgs[0].Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := netlink.Message{Header: netlink.Header{Type: unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWCHAIN}, Data: data}
		chains, err := listChains(replying(t, []netlink.Message{m}), tbl.Family)
		if err != nil {
			return
		}
		for _, kc := range chains {
			b := decodeBase(kc)
			if b == nil || strings.HasPrefix(b.Hook, "hook-") {
				continue // a regular chain, or a hook that is never ours
			}
			back := marshal(t, func(conn *nftables.Conn) error {
				conn.AddChain(newChain(tbl, &nft.Chain{Name: "c", Base: b}))
				return nil
			})
			again, err := replying(t, back).ListChainsOfTableFamily(tbl.Family)
			if err != nil || len(again) != 1 {
				t.Fatalf("base %+v encoded again: %d chains, %v", b, len(again), err)
			}
			if got := decodeBase(again[0]); !reflect.DeepEqual(b, got) {
				t.Fatalf("base %+v encodes and decodes to %+v", b, got)
			}
		}
	})
}

func fuzzChains() []nft.Chain {
	return []nft.Chain{
		{Name: "services"},
		{Name: "nat-prerouting", Base: &nft.Base{Type: "nat", Hook: "prerouting", Priority: -100}},
		{Name: "filter-output-pre-dnat", Base: &nft.Base{Type: "filter", Hook: "output", Priority: -110}},
	}
}

// FuzzNotification fuzzes the decoding of an announcement of somebody
// else's transaction. Whatever it holds, decode returns changes of our
// table in one of our families, each naming what changed; an element it
// decodes prints.
func FuzzNotification(f *testing.F) {
	for _, seed := range notificationSeeds(f) {
		f.Add(seed.typ, seed.flags, seed.data)
	}
	f.Fuzz(func(t *testing.T, typ uint8, flags uint16, data []byte) {
		s := &subscription{defs: knownDefs()}
		m := netlink.Message{
			Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | uint16(typ)), Flags: netlink.HeaderFlags(flags)},
			Data:   data,
		}
		for _, c := range s.decode(m) {
			if c.Family != nft.IPv4 && c.Family != nft.IPv6 {
				t.Fatalf("change %+v: family %q", c, c.Family)
			}
			if c.Element == nil {
				continue
			}
			def := s.defs.byFa[c.Family][c.Name]
			if def == nil {
				t.Fatalf("change %+v: an element decoded without its set's definition", c)
			}
			_ = def.ElementText(*c.Element)
		}
	})
}

type notificationSeed struct {
	typ   uint8
	flags uint16
	data  []byte
}

// notificationSeeds are the messages of a transaction of ours, as the
// kernel announces them: a rule, elements of each kind, a set, a chain.
func notificationSeeds(f *testing.F) []notificationSeed {
	var seeds []notificationSeed
	for i, tc := range elementCases() {
		tc.set.Name = fmt.Sprintf("s%d", i)
		var w batchWriter
		w.elements(newSetElemType, tc.f, &tc.set, []nft.Element{tc.elem})
		seeds = append(seeds, notificationSeed{unix.NFT_MSG_NEWSETELEM, 0, batchPayloads(f, &w)[0]})
	}
	rule := nft.Rule{Stmts: stmtCases(nft.IPv4)[:1]}
	seeds = append(seeds, notificationSeed{unix.NFT_MSG_NEWRULE, 0, ruleMessage(f, nft.IPv4, rule)})
	tbl := tableOf(nft.IPv4)
	for _, c := range fuzzChains() {
		msgs := marshal(f, func(conn *nftables.Conn) error {
			conn.AddChain(newChain(tbl, &c))
			return nil
		})
		seeds = append(seeds, notificationSeed{unix.NFT_MSG_NEWCHAIN, uint16(netlink.Create), msgs[0].Data})
	}
	set := fuzzSets()[3]
	msgs := marshal(f, func(c *nftables.Conn) error { return c.AddSet(newSet(tbl, &set), nil) })
	return append(seeds, notificationSeed{unix.NFT_MSG_NEWSET, uint16(netlink.Create), msgs[0].Data})
}

// knownDefs are set definitions of both families, as if read from the
// kernel already: decode never dials it for them.
func knownDefs() setDefs {
	d := setDefs{byFa: map[nft.Family]map[string]*nft.Set{nft.IPv4: {}, nft.IPv6: {}}}
	for i, tc := range elementCases() {
		s := tc.set
		s.Name = fmt.Sprintf("s%d", i)
		d.byFa[tc.f][s.Name] = &s
	}
	return d
}
