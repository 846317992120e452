//go:build integration

package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestDataplaneWatchAndRepair: the Dataplane programs a node namespace;
// each change somebody makes to our table through the nft binary is
// announced by the kernel, and Watch repairs it by itself, from the
// announcement alone (no read-back), to the very listing it had before. A
// change to another table repairs nothing.
func TestDataplaneWatchAndRepair(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	d := dataplane.New(p.k)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	repairs := d.Watch(ctx)
	snap := mixedSnapshot()
	for i := range snap.Services {
		if snap.Services[i].Name == "api" { // an interval set's elements too
			snap.Services[i].LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("192.0.2.9/32")}
		}
	}
	in := dataplane.Input{Snapshot: &snap, Node: p.node, Options: p.opts}
	if res, err := d.Sync(in); err != nil || !res.Full {
		t.Fatalf("first sync: %+v, %v; want a full sync", res, err)
	}
	p.committed = p.compile(t, snap)
	want := listTables(t, c.Node)
	element := func(f nft.Family, set string, i int) string {
		s := p.committed[f].Set(set)
		return fmt.Sprintf("delete element %s kube-proxy %s { %s }", f, set, s.KeyText(s.Elements[i].Key))
	}
	// The first endpoint map of a kind: endpoints-3, nodeport-endpoints-2.
	endpointMap := func(f nft.Family, kind string) string {
		for _, s := range p.committed[f].Sets {
			if strings.HasPrefix(s.Name, kind+"-") && len(s.Elements) > 0 {
				return s.Name
			}
		}
		t.Fatalf("%s: no %s map with elements", f, kind)
		return ""
	}
	in.Changed = map[string]bool{}
	for _, tc := range []struct {
		tamper string
		ops    int // a patch's operations; 0: the table rebuilt
	}{
		{"delete element ip kube-proxy cluster-ip-ports { 10.96.1.10 . tcp . 80 }", 1},
		{element(nft.IPv4, endpointMap(nft.IPv4, "endpoints"), 0), 1},
		{element(nft.IPv4, "firewall-allow", 0), 1},
		{element(nft.IPv4, "firewall-allow", 1), 1},
		{element(nft.IPv6, endpointMap(nft.IPv6, "nodeport-endpoints"), 0), 1},
		{element(nft.IPv6, "cluster-ips", 0), 1},
		{"flush chain ip kube-proxy pick-endpoint", 1 + len(p.committed[nft.IPv4].Chain("pick-endpoint").Rules)},
		{"add rule ip kube-proxy services counter", 1 + len(p.committed[nft.IPv4].Chain("services").Rules)},
		{"add chain ip6 kube-proxy stray", 2},
		// A range's start and end are announced apart, and paired again.
		{"delete element ip kube-proxy service-cidrs { 10.97.0.0/16 }", 1},
		{"add element ip6 kube-proxy service-cidrs { fd00:99::/64 }", 1},
		{"add element ip kube-proxy service-cidrs { 10.98.0.0-10.98.0.2 }", 0}, // no prefix: rebuilt
		{"delete table ip kube-proxy", 0},
	} {
		t.Run(tc.tamper, func(t *testing.T) {
			nftIn(t, c.Node, strings.Fields(tc.tamper)...)
			var rep dataplane.Repair
			select {
			case rep = <-repairs:
			case <-time.After(10 * time.Second):
				t.Fatal("no repair within 10s")
			}
			if rep.Err != nil || rep.ReadBack || rep.Ops == 0 || (tc.ops > 0 && rep.Ops != tc.ops) {
				t.Fatalf("repair %+v, want %d ops from the announcement", rep, tc.ops)
			}
			if diff := cmp.Diff(elementOrderFree(want), elementOrderFree(listTables(t, c.Node))); diff != "" {
				t.Errorf("ruleset after repair (-before +after):\n%s", diff)
			}
			assertInSync(t, p)
		})
	}
	t.Run("another table changed", func(t *testing.T) {
		nftIn(t, c.Node, "add", "table", "ip", "other")
		nftIn(t, c.Node, "add", "chain", "ip", "other", "c")
		res, err := d.Sync(in)
		if err != nil || res.Ops != 0 || res.Repaired || res.ReadBack {
			t.Fatalf("sync after another table changed: %+v, %v; want nothing, no read-back", res, err)
		}
		nftIn(t, c.Node, "delete", "element", "ip", "kube-proxy", "cluster-ip-ports", "{ 10.96.1.10 . tcp . 80 }")
		if rep := <-repairs; rep.Ops != 1 || rep.ReadBack {
			t.Fatalf("first repair after it: %+v, want the element's alone", rep)
		}
		if !strings.Contains(nftIn(t, c.Node, "list", "tables"), "table ip other") {
			t.Error("the other table is gone")
		}
	})
}

// elementOrderFree returns the lines of a listing sorted, without the
// commas between elements: a set lists its elements in the order of its
// backend (an interval set's, in the order they were added), which a repair
// that adds one back changes.
func elementOrderFree(listing string) []string {
	lines := strings.Split(listing, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "elements = { ")
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, " }"), ",")
	}
	slices.Sort(lines)
	return lines
}

// listTables lists our tables, IPv4 first: a repaired table may come
// second in `nft list ruleset`, which lists tables in creation order.
func listTables(t *testing.T, ns *lab.NS) string {
	t.Helper()
	return nftIn(t, ns, "list", "table", "ip", nft.TableName) + nftIn(t, ns, "list", "table", "ip6", nft.TableName)
}

// TestGenerationMovesOncePerCommit checks the kernel fact the Dataplane's
// bookkeeping rests on: one committed transaction moves the ruleset
// generation by exactly one, and a read does not move it.
func TestGenerationMovesOncePerCommit(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	before, err := p.k.Generation()
	if err != nil {
		t.Fatal(err)
	}
	p.sync(t, mixedSnapshot())
	mustRead(t, p)
	after, err := p.k.Generation()
	if err != nil {
		t.Fatal(err)
	}
	if after != before+1 {
		t.Fatalf("generation %d -> %d after one commit and a read, want +1", before, after)
	}
}

// kubeProxyTable is a table in upstream kube-proxy's nftables layout: an
// anonymous numgen map per Service and endpoint chains.
const kubeProxyTable = `table ip kube-proxy {
	comment "rules for kube-proxy"
	set cluster-ips { type ipv4_addr; comment "Active ClusterIPs"; }
	map service-ips { type ipv4_addr . inet_proto . inet_service : verdict; }
	chain endpoint-AAAA-test/web/tcp/http__10.244.1.2/8080 { meta l4proto tcp dnat to 10.244.1.2:8080; }
	chain service-AAAA-test/web/tcp/http { numgen random mod 1 vmap { 0 : goto endpoint-AAAA-test/web/tcp/http__10.244.1.2/8080 }; }
	chain services { ip daddr . meta l4proto . th dport vmap @service-ips; }
	chain nat-prerouting { type nat hook prerouting priority dstnat; policy accept; jump services; }
}
add element ip kube-proxy service-ips { 10.96.1.10 . tcp . 80 : goto service-AAAA-test/web/tcp/http }
`

// TestDataplaneTakesOverKubeProxyTable: the first Sync replaces a table
// left by kube-proxy, in one transaction, with exactly ours.
func TestDataplaneTakesOverKubeProxyTable(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	file := filepath.Join(t.TempDir(), "kube-proxy.nft")
	if err := os.WriteFile(file, []byte(kubeProxyTable), 0o600); err != nil {
		t.Fatal(err)
	}
	nftIn(t, c.Node, "-f", file)
	gen, err := p.k.Generation()
	if err != nil {
		t.Fatal(err)
	}
	snap := mixedSnapshot()
	res, err := dataplane.New(p.k).Sync(dataplane.Input{Snapshot: &snap, Node: p.node, Options: p.opts})
	if err != nil || !res.Full {
		t.Fatalf("first sync: %+v, %v; want a full sync", res, err)
	}
	if now, _ := p.k.Generation(); now != gen+1 {
		t.Errorf("generation %d -> %d: want the takeover in one transaction", gen, now)
	}
	p.committed = p.compile(t, snap)
	assertInSync(t, p)
	if rs := mustRead(t, p); rs[nft.IPv4].Chain("service-AAAA-test/web/tcp/http") != nil {
		t.Error("kube-proxy's chain survived the takeover")
	}
}

// TestDataplaneIncrementalMatchesKernel: partial syncs of random endpoint
// changes, each sent as the few operations Tables.Update plans, leave the
// kernel holding exactly what a fresh compile gives.
func TestDataplaneIncrementalMatchesKernel(t *testing.T) {
	c := lab.NewCluster(t, 0)
	p := newProxy(t, c)
	d := dataplane.New(p.k)
	snap := mixedSnapshot()
	in := dataplane.Input{Snapshot: &snap, Node: p.node, Options: p.opts}
	if _, err := d.Sync(in); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 5))
	for step := range 40 {
		sl := &snap.Slices[r.IntN(len(snap.Slices))]
		changeEndpoints(r, sl, step)
		in.Changed = map[string]bool{sl.Namespace + "/" + sl.Service: true}
		res, err := d.Sync(in)
		if err != nil || res.Full || res.Repaired {
			t.Fatalf("step %d: %+v, %v; want a partial sync", step, res, err)
		}
		p.committed = p.compile(t, snap)
		assertInSync(t, p)
	}
}

// changeEndpoints removes, adds or flips the readiness of one endpoint.
func changeEndpoints(r *rand.Rand, sl *model.EndpointSlice, step int) {
	switch n := len(sl.Endpoints); {
	case n > 1 && r.IntN(3) == 0:
		sl.Endpoints = sl.Endpoints[:n-1]
	case n > 0 && r.IntN(2) == 0:
		sl.Endpoints[0].Ready = !sl.Endpoints[0].Ready
	default:
		a := netip.AddrFrom4([4]byte{10, 244, 9, byte(step + 1)})
		if sl.AddressType == model.IPv6 {
			a = netip.AddrFrom16([16]byte{0xfd, 0, 0, 0x10, 0x02, 0x44, 0, 9, 15: byte(step + 1)})
		}
		sl.Endpoints = append(sl.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, Serving: true, NodeName: "node-1"})
	}
}

// TestDataplaneRepairRestoresTraffic: with real packets, a Service stops
// working when somebody deletes our table. Deleted before Watch follows the
// notifications, Watch finds the generation moved and reads the tables back;
// deleted while it follows them, it rebuilds the table from the
// notification alone. Either way the Service works again.
func TestDataplaneRepairRestoresTraffic(t *testing.T) {
	c := lab.NewCluster(t, 1)
	p := newProxy(t, c)
	b0 := c.Backends[0]
	ports := []port{{name: "tcp", proto: model.TCP, port: 80, target: 8080}}
	snap := snapshot(service("web", addrs("10.96.0.10"), ports...), ports, b0.IPv4)
	d := dataplane.New(p.k)
	in := dataplane.Input{Snapshot: &snap, Node: p.node, Options: p.opts, Changed: map[string]bool{}}
	if _, err := d.Sync(in); err != nil {
		t.Fatal(err)
	}
	serve(t, ports[0], b0, b0.IPv4)
	addr := lab.AddrPort(netip.MustParseAddr("10.96.0.10"), 80)
	if got := ask(t, c.Client, lab.Proto("tcp"), "", addr); got.Name != b0.Name {
		t.Fatalf("before: reply from %q, want %q", got.Name, b0.Name)
	}
	nftIn(t, c.Node, "delete", "table", "ip", nft.TableName)
	if _, err := c.Client.Request(lab.Proto("tcp"), addr, timeout); err == nil {
		t.Fatal("the Service still answers without our table")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	repairs := d.Watch(ctx)
	for _, readBack := range []bool{true, false} {
		var rep dataplane.Repair
		select {
		case rep = <-repairs:
		case <-time.After(10 * time.Second):
			t.Fatal("no repair within 10s")
		}
		if rep.Err != nil || rep.Ops == 0 || rep.ReadBack != readBack {
			t.Fatalf("repair %+v, want one with readBack=%v", rep, readBack)
		}
		if got := ask(t, c.Client, lab.Proto("tcp"), "", addr); got.Name != b0.Name {
			t.Fatalf("after repair: reply from %q, want %q", got.Name, b0.Name)
		}
		if readBack {
			nftIn(t, c.Node, "delete", "table", "ip", nft.TableName) // now announced
		}
	}
}
