package main

import (
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Names as upstream kube-proxy's own nftables tests spell them.
func TestKubeProxyChainNames(t *testing.T) {
	tests := []struct{ prefix, name, want string }{
		{"service", "ns1/svc1/tcp/p80", "service-ULMVA6XW-ns1/svc1/tcp/p80"},
		{"endpoint", "ns1/svc1/tcp/p80__10.180.0.1/80", "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"},
		{"external", "ns2/svc2/tcp/p80", "external-42NFTM6N-ns2/svc2/tcp/p80"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := kpChain(tc.prefix, tc.name); got != tc.want {
				t.Errorf("kpChain(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
			}
		})
	}
}

var testKP = kpOptions{ClusterCIDR: "10.0.0.0/8", ServiceCIDR: "172.30.0.0/16",
	NodeIP: netip.MustParseAddr("192.168.0.2"), NodeName: "test-node"}

// oneService is ns1/svc1: ClusterIP 172.30.0.41, port p80 -> 80, endpoints
// 10.180.0.1 and 10.180.0.2; NodePort 3001 when nodePort is set.
func oneService(nodePort uint16, affinity int32) *model.Snapshot {
	svc := model.Service{Namespace: "ns1", Name: "svc1", Type: model.ClusterIP,
		ClusterIPs:      []netip.Addr{netip.MustParseAddr("172.30.0.41")},
		Ports:           []model.ServicePort{{Name: "p80", Protocol: model.TCP, Port: 80, NodePort: nodePort}},
		AffinitySeconds: affinity}
	slice := model.EndpointSlice{Namespace: "ns1", Name: "svc1-a", Service: "svc1", AddressType: model.IPv4,
		Ports: []model.EndpointPort{{Name: "p80", Protocol: model.TCP, Port: 80}},
		Endpoints: []model.Endpoint{
			{Addresses: []netip.Addr{netip.MustParseAddr("10.180.0.1")}, Ready: true},
			{Addresses: []netip.Addr{netip.MustParseAddr("10.180.0.2")}, Ready: true},
		}}
	return &model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{slice}}
}

// expand replaces <svc>, <ext>, <ep1>, <ep2> with ns1/svc1's chain names.
func expand(text string) string {
	p := "ns1/svc1/tcp/p80"
	return strings.NewReplacer(
		"<svc>", kpChain("service", p), "<ext>", kpChain("external", p),
		"<ep1>", kpChain("endpoint", p+"__10.180.0.1/80"), "<ep2>", kpChain("endpoint", p+"__10.180.0.2/80"),
		"<ep3>", kpChain("endpoint", p+"__10.180.0.3/80"),
		"<aff1>", kpChain("affinity", p+"__10.180.0.1/80"), "<aff2>", kpChain("affinity", p+"__10.180.0.2/80"),
	).Replace(strings.TrimLeft(text, "\n"))
}

func TestWriteKubeProxy(t *testing.T) {
	tests := []struct {
		name string
		snap *model.Snapshot
		want string // after the fixed skeleton
	}{{
		name: "ClusterIP",
		snap: oneService(0, 0),
		want: `
add element ip kube-proxy cluster-ips { 172.30.0.41 }
add chain ip kube-proxy <ep1>
add rule ip kube-proxy <ep1> ip saddr 10.180.0.1 jump mark-for-masquerade
add rule ip kube-proxy <ep1> meta l4proto tcp dnat to 10.180.0.1:80
add chain ip kube-proxy <ep2>
add rule ip kube-proxy <ep2> ip saddr 10.180.0.2 jump mark-for-masquerade
add rule ip kube-proxy <ep2> meta l4proto tcp dnat to 10.180.0.2:80
add chain ip kube-proxy <svc>
add rule ip kube-proxy <svc> ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ip kube-proxy <svc> numgen random mod 2 vmap { 0 : goto <ep1> , 1 : goto <ep2> }
add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto <svc> }
`,
	}, {
		name: "NodePort with session affinity",
		snap: oneService(3001, 10800),
		want: `
add element ip kube-proxy cluster-ips { 172.30.0.41 }
add set ip kube-proxy <aff1> { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
add chain ip kube-proxy <ep1>
add rule ip kube-proxy <ep1> ip saddr 10.180.0.1 jump mark-for-masquerade
add rule ip kube-proxy <ep1> update @<aff1> { ip saddr }
add rule ip kube-proxy <ep1> meta l4proto tcp dnat to 10.180.0.1:80
add set ip kube-proxy <aff2> { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
add chain ip kube-proxy <ep2>
add rule ip kube-proxy <ep2> ip saddr 10.180.0.2 jump mark-for-masquerade
add rule ip kube-proxy <ep2> update @<aff2> { ip saddr }
add rule ip kube-proxy <ep2> meta l4proto tcp dnat to 10.180.0.2:80
add chain ip kube-proxy <svc>
add rule ip kube-proxy <svc> ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ip kube-proxy <svc> ip saddr @<aff1> goto <ep1>
add rule ip kube-proxy <svc> ip saddr @<aff2> goto <ep2>
add rule ip kube-proxy <svc> numgen random mod 2 vmap { 0 : goto <ep1> , 1 : goto <ep2> }
add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto <svc> }
add chain ip kube-proxy <ext>
add rule ip kube-proxy <ext> jump mark-for-masquerade
add rule ip kube-proxy <ext> goto <svc>
add element ip kube-proxy service-nodeports { tcp . 3001 : goto <ext> }
`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeKubeProxy(&b, tc.snap, testKP); err != nil {
				t.Fatal(err)
			}
			got, ok := strings.CutPrefix(b.String(), kpSkeleton(testKP))
			if !ok {
				t.Fatalf("output does not start with the skeleton:\n%s", b.String())
			}
			if diff := cmp.Diff(expand(tc.want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func kpSkeleton(o kpOptions) string {
	var b strings.Builder
	_ = writeKubeProxy(&b, &model.Snapshot{}, o)
	return b.String()
}

// One endpoint moves from 10.180.0.1 to 10.180.0.3: kube-proxy rewrites
// the Service's chains and drops the old endpoint's chain after the rule
// that jumped to it is gone.
func TestWriteKubeProxyChange(t *testing.T) {
	old := oneService(0, 0)
	cur := oneService(0, 0)
	cur.Slices[0].Endpoints = []model.Endpoint{
		{Addresses: []netip.Addr{netip.MustParseAddr("10.180.0.3")}, Ready: true},
		old.Slices[0].Endpoints[1],
	}
	var b strings.Builder
	if err := writeKubeProxyChange(&b, old, cur, map[string]bool{"ns1/svc1": true}, testKP); err != nil {
		t.Fatal(err)
	}
	want := expand(`
add chain ip kube-proxy <ep3>
flush chain ip kube-proxy <ep3>
add rule ip kube-proxy <ep3> ip saddr 10.180.0.3 jump mark-for-masquerade
add rule ip kube-proxy <ep3> meta l4proto tcp dnat to 10.180.0.3:80
add chain ip kube-proxy <ep2>
flush chain ip kube-proxy <ep2>
add rule ip kube-proxy <ep2> ip saddr 10.180.0.2 jump mark-for-masquerade
add rule ip kube-proxy <ep2> meta l4proto tcp dnat to 10.180.0.2:80
add chain ip kube-proxy <svc>
flush chain ip kube-proxy <svc>
add rule ip kube-proxy <svc> ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ip kube-proxy <svc> numgen random mod 2 vmap { 0 : goto <ep3> , 1 : goto <ep2> }
flush chain ip kube-proxy <ep1>
delete chain ip kube-proxy <ep1>
`)
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

var (
	addChain   = regexp.MustCompile(`^add chain ip kube-proxy (\S+)`)
	flushChain = regexp.MustCompile(`^flush chain ip kube-proxy (\S+)`)
	delChain   = regexp.MustCompile(`^delete chain ip kube-proxy (\S+)`)
	addRule    = regexp.MustCompile(`^add rule ip kube-proxy (\S+)`)
	target     = regexp.MustCompile(`(?:goto|jump) ([^ ,}]+)`)
)

// The generated transactions must be valid for nft: every chain exists
// before a rule or element jumps to it, and a chain is deleted only when
// nothing jumps to it any more. Checked over the whole synthetic mix, with
// changes to Services of every kind (LoadBalancer with
// externalTrafficPolicy: Local at 0 and 40, session affinity at 7 and 57).
func TestKubeProxyChainsBeforeUse(t *testing.T) {
	snap := generate(size{services: 200, endpoints: 3})
	var full, change strings.Builder
	o := baselineOptions() // this node has endpoints: local chains are written
	if err := writeKubeProxy(&full, snap, o); err != nil {
		t.Fatal(err)
	}
	cur, changed := changeEndpoints(snap, []int{0, 1, 7, 40, 57, 101}, 1)
	if err := writeKubeProxyChange(&change, snap, cur, changed, o); err != nil {
		t.Fatal(err)
	}
	c := &chainChecker{t: t, exists: map[string]bool{}, refs: map[string]map[string]bool{}}
	for _, base := range []string{"mark-for-masquerade", "reject-chain"} {
		c.exists[base] = true
	}
	c.check(full.String())
	if len(c.exists) < 200 {
		t.Fatalf("only %d chains in the full ruleset", len(c.exists))
	}
	c.check(change.String())
	if !strings.Contains(change.String(), "delete chain") {
		t.Error("the change deletes no endpoint chain")
	}
}

// chainChecker follows a transaction's chains and the jumps between them.
type chainChecker struct {
	t      *testing.T
	exists map[string]bool
	refs   map[string]map[string]bool // target chain -> chains (or "element") jumping to it
}

func (c *chainChecker) check(text string) {
	c.t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if err := c.line(line); err != "" {
			c.t.Fatalf("line %d: %s: %s", i+1, err, line)
		}
	}
}

func (c *chainChecker) line(line string) string {
	if m := addChain.FindStringSubmatch(line); m != nil {
		c.exists[m[1]] = true
		return ""
	}
	if m := flushChain.FindStringSubmatch(line); m != nil {
		for _, from := range c.refs {
			delete(from, m[1])
		}
		return ""
	}
	if m := delChain.FindStringSubmatch(line); m != nil {
		if len(c.refs[m[1]]) > 0 {
			return "deletes a chain still jumped to"
		}
		delete(c.exists, m[1])
		return ""
	}
	source := "element"
	if m := addRule.FindStringSubmatch(line); m != nil {
		source = m[1]
	}
	for _, m := range target.FindAllStringSubmatch(line, -1) {
		if !c.exists[m[1]] {
			return "jumps to a chain that does not exist"
		}
		if c.refs[m[1]] == nil {
			c.refs[m[1]] = map[string]bool{}
		}
		c.refs[m[1]][source] = true
	}
	return ""
}
