package kernel

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

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
