package trace_test

import (
	"fmt"
	"math/big"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestJhash checks the kernel's jhash against the published values of Bob
// Jenkins' lookup3.c hashlittle, which it is (driver5 of lookup3.c). That
// the kernel computes the same for our rules is proven with real packets
// (integration/maglev_test.go).
func TestJhash(t *testing.T) {
	for _, tc := range []struct {
		key  string
		seed uint32
		want uint32
	}{
		{"", 0, 0xdeadbeef},
		{"", 0xdeadbeef, 0xbd5b7dde},
		{"Four score and seven years ago", 0, 0x17770551},
		{"Four score and seven years ago", 1, 0xcd628161},
	} {
		if got := trace.Jhash([]byte(tc.key), tc.seed); got != tc.want {
			t.Errorf("Jhash(%q, %#x) = %#x, want %#x", tc.key, tc.seed, got, tc.want)
		}
	}
}

// maglevTable compiles one Maglev Service with n endpoints and M = 101.
func maglevTable(t *testing.T, n int) *nft.Table {
	t.Helper()
	svc := service("web", addrs("10.96.0.10"), port("http", model.TCP, 80))
	svc.LoadBalancing = compile.LoadBalancingMaglev
	var ips []netip.Addr
	for i := range n {
		ips = append(ips, addr(fmt.Sprintf("10.0.1.%d", i+1)))
	}
	o := options()
	o.Maglev = compile.Maglev{TableSize: 101, Seed: 7}
	snap := &model.Snapshot{Services: []model.Service{svc},
		Slices: []model.EndpointSlice{slice("web", "web-1", []model.EndpointPort{epPort("http", model.TCP, 8080)}, ips)}}
	rs, problems := compile.Ruleset(snap, node, o)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	return rs[nft.IPv4]
}

// TestMaglevTrace: with a source port the trace names one endpoint, the
// one in the slot HashValue computes; without one it gives each endpoint
// the share of the slots it holds, and the shares sum to 1.
func TestMaglevTrace(t *testing.T) {
	tbl := maglevTable(t, 3)
	eps := tbl.Set(nft.MapEndpoints + "-maglev")
	rung := tbl.Chain(nft.ChainPickEndpoint + "-maglev").Rules[0].Stmts[0].(nft.DNATMap)
	slots := map[string]int64{}
	for _, e := range eps.Elements {
		slots[eps.DataText(e.Data)]++
	}
	for sport := uint16(40000); sport < 40010; sport++ {
		p := trace.Packet{Saddr: remoteIP, Daddr: addr("10.96.0.10"), Proto: nft.ProtoTCP, Dport: 80, Sport: sport}
		outs, err := trace.Trace(tbl, p, trace.Options{LocalAddrs: []netip.Addr{nodeIP}})
		if err != nil {
			t.Fatal(err)
		}
		want := slotEndpoint(t, eps, trace.HashValue(rung.Hash, p))
		if len(outs) != 1 || outs[0].Dest().String() != want {
			t.Errorf("sport %d: outcomes %v, want one to %s", sport, outs, want)
		}
	}
	p := trace.Packet{Saddr: remoteIP, Daddr: addr("10.96.0.10"), Proto: nft.ProtoTCP, Dport: 80}
	outs, err := trace.Trace(tbl, p, trace.Options{LocalAddrs: []netip.Addr{nodeIP}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range outs {
		got[o.Dest().String()] = o.Prob.RatString()
	}
	want := map[string]string{}
	for data, n := range slots {
		want[dataDest(data)] = big.NewRat(n, 101).RatString()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shares without a source port (-want +got):\n%s", diff)
	}
}

// slotEndpoint returns "addr:port" of the element of the endpoint map
// whose index is idx.
func slotEndpoint(t *testing.T, eps *nft.Set, idx uint32) string {
	t.Helper()
	for _, e := range eps.Elements {
		if e.Key[len(e.Key)-1].Num == idx {
			return dataDest(eps.DataText(e.Data))
		}
	}
	t.Fatalf("no slot %d", idx)
	return ""
}

// dataDest turns an endpoint map value "10.0.1.1 . 8080" into
// "10.0.1.1:8080".
func dataDest(data string) string {
	var a string
	var p int
	fmt.Sscanf(data, "%s . %d", &a, &p)
	return netip.AddrPortFrom(netip.MustParseAddr(a), uint16(p)).String()
}
