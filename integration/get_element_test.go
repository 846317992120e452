//go:build integration

package integration

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
)

// TestGetElement proves that a single-element request finds every element
// of every set and map we program, with its data, and reports an absent
// key, set or table as not found.
func TestGetElement(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	if _, ok, err := p.k.GetElement(nft.IPv4, &nft.Set{Name: "cluster-ips", Key: []nft.DataType{nft.TypeIPv4Addr}},
		[]nft.Value{{Addr: netip.MustParseAddr("10.96.1.10")}}); ok || err != nil {
		t.Fatalf("before any sync: found %v, error %v; want not found", ok, err)
	}
	p.sync(t, mixedSnapshot())
	checked := 0
	for f, table := range p.committed {
		for _, s := range table.Sets {
			if s.Interval || s.Dynamic {
				continue // a range or the packet path's elements: not looked up by key
			}
			for _, want := range s.Elements {
				got, ok, err := p.k.GetElement(f, s, want.Key)
				if err != nil || !ok {
					t.Fatalf("%s %s %s: found %v, error %v", f, s.Name, s.ElementText(want), ok, err)
				}
				if diff := cmp.Diff(s.ElementText(want), s.ElementText(got)); diff != "" {
					t.Errorf("%s %s (-want +got):\n%s", f, s.Name, diff)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no element checked")
	}
	absent := []nft.Value{{Addr: netip.MustParseAddr("10.96.255.254")}, {Num: uint32(nft.ProtoTCP)}, {Num: 80}}
	set := p.committed[nft.IPv4].Set("service-ips")
	if _, ok, err := p.k.GetElement(nft.IPv4, set, absent); ok || err != nil {
		t.Errorf("absent key: found %v, error %v; want not found", ok, err)
	}
	if _, ok, err := p.k.GetElement(nft.IPv4, &nft.Set{Name: "no-such-set", Key: set.Key}, absent); ok || err != nil {
		t.Errorf("absent set: found %v, error %v; want not found", ok, err)
	}
}
