package explain_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

// TestOutcomes: every reason the table drops, rejects, masquerades or
// leaves a packet alone, said in words, over the compiled golden fixtures.
func TestOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name, fixture, src, dst, proto string
		from                           explain.Origin
		service                        string // "ns/name:port entry", "" for none
		want                           []string
	}{
		{"ClusterIP from a Pod", "nodeport", "10.244.3.3", "10.96.0.20:80", "tcp", "", "demo/shop:http ClusterIP",
			[]string{"1/2 accept 10.244.1.3:8080", "1/2 accept 10.244.2.3:8080"}},
		{"ClusterIP from outside the cluster CIDRs", "nodeport", "192.0.2.7", "10.96.0.20:80", "tcp", "", "demo/shop:http ClusterIP",
			[]string{"1/2 accept 10.244.1.3:8080 masq", "1/2 accept 10.244.2.3:8080"}},
		{"NodePort from outside", "nodeport", "192.0.2.7", "198.51.100.1:30080", "tcp", "", "demo/shop:http NodePort",
			[]string{"1/2 accept 10.244.1.3:8080 masq", "1/2 accept 10.244.2.3:8080"}},
		{"port not defined", "clusterip", "10.244.1.9", "10.96.0.10:81", "tcp", "", "",
			[]string{"1 reject 10.96.0.10:81: port not defined: 10.96.0.10 is a ClusterIP, but no Service has tcp port 81 on it"}},
		{"protocol not defined", "clusterip", "10.244.1.9", "10.96.0.10:80", "udp", "", "",
			[]string{"1 reject 10.96.0.10:80: port not defined: 10.96.0.10 is a ClusterIP, but no Service has udp port 80"}},
		{"no endpoints", "no-endpoints", "10.244.1.9", "10.96.0.50:80", "tcp", "", "demo/pending:http ClusterIP",
			[]string{"1 reject 10.96.0.50:80: no endpoints: demo/pending:http (ClusterIP) has no ready endpoint"}},
		{"no endpoints, NodePort", "no-endpoints", "192.0.2.7", "198.51.100.1:30050", "tcp", "", "demo/zz-duplicate:http NodePort",
			[]string{"1 reject 198.51.100.1:30050: no endpoints: demo/zz-duplicate:http (NodePort)"}},
		{"source outside loadBalancerSourceRanges", "source-ranges", "203.0.113.7", "203.0.113.30:443", "tcp", "", "demo/api:https load-balancer IP",
			[]string{"1 drop 203.0.113.30:443: source 203.0.113.7 is outside the loadBalancerSourceRanges of demo/api:https (load-balancer IP) " +
				"(allowed: 192.0.2.0/24, 198.51.100.0/24, 203.0.113.30/32)"}},
		{"source inside loadBalancerSourceRanges", "source-ranges", "192.0.2.200", "203.0.113.30:443", "tcp", "", "demo/api:https load-balancer IP",
			[]string{"1 accept 10.244.1.4:8443 masq"}},
		{"eTP Local, outside, no local endpoint", "etp-local", "192.0.2.7", "198.51.100.1:30053", "udp", "", "demo/np:dns NodePort",
			[]string{"1 drop 198.51.100.1:30053: demo/np:dns (NodePort): externalTrafficPolicy: Local, and no endpoint of it is on this node"}},
		{"eTP Local, outside, local endpoint", "etp-local", "192.0.2.7", "203.0.113.20:80", "tcp", "", "demo/lb:http load-balancer IP",
			[]string{"1 accept 10.244.1.5:8080"}},
		{"eTP Local, from the node", "etp-local", "", "203.0.113.20:80", "tcp", explain.Node, "demo/lb:http load-balancer IP",
			[]string{"1/2 accept 10.244.1.5:8080 masq", "1/2 accept 10.244.2.5:8080 masq"}},
		{"iTP Local, no local endpoint", "itp-local", "10.244.1.9", "10.96.0.51:80", "tcp", "", "demo/remote:http ClusterIP",
			[]string{"1 drop 10.96.0.51:80: demo/remote:http (ClusterIP): internalTrafficPolicy: Local, and no endpoint of it is on this node"}},
		{"iTP Local, local endpoint", "itp-local", "10.244.1.9", "10.96.0.50:514", "udp", "", "demo/logs:syslog ClusterIP",
			[]string{"1 accept 10.244.1.7:514"}},
		{"not a Service address", "clusterip", "10.244.1.9", "10.244.3.2:8080", "tcp", "", "",
			[]string{"1 accept 10.244.3.2:8080: not a Service address: nftproxy does not change it"}},
		{"a Service address on another port", "loadbalancer", "192.0.2.7", "203.0.113.10:80", "tcp", "", "",
			[]string{"1 accept 203.0.113.10:80: 203.0.113.10 is an address of Service demo/api, but no Service port there is tcp/80"}},
		{"a NodePort on an address that takes none", "nodeport", "192.0.2.7", "198.51.100.9:30080", "tcp", "", "",
			[]string{"1 accept 198.51.100.9:30080: tcp/30080 is the NodePort of demo/shop:http, but 198.51.100.9 does not accept " +
				"NodePorts (nodeport-ips: 198.51.100.1): nftproxy does not change this packet"}},
		{"unallocated ClusterIP", "servicecidr", "10.244.1.9", "10.96.0.99:80", "tcp", "", "",
			[]string{"1 drop 10.96.0.99:80: unallocated ClusterIP: 10.96.0.99 is in the ServiceCIDR 10.96.0.0/16, but no Service holds it"}},
		{"unallocated ClusterIP, IPv6", "servicecidr", "fd00:10:244::9", "[fd00:10:96::99]:80", "tcp", "", "",
			[]string{"1 drop [fd00:10:96::99]:80: unallocated ClusterIP: fd00:10:96::99 is in the ServiceCIDR fd00:10:96::/108"}},
		{"outside every ServiceCIDR", "servicecidr", "10.244.1.9", "10.98.0.1:80", "tcp", "", "",
			[]string{"1 accept 10.98.0.1:80: not a Service address"}},
		{"hairpin", "nodeport", "10.244.1.3", "10.96.0.20:80", "tcp", "", "demo/shop:http ClusterIP",
			[]string{"1/2 accept 10.244.1.3:8080 masq", "1/2 accept 10.244.2.3:8080"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx, rs := load(t, tc.fixture)
			r := request(tc.src, tc.dst, tc.proto, tc.from)
			rep, err := explain.Trace(rs[nft.FamilyOf(r.Dst.Addr())], r, withCluster(fx))
			if err != nil {
				t.Fatal(err)
			}
			wantLines(t, summary(rep), tc.want)
			got := ""
			if rep.Service != nil {
				got = rep.Service.Namespace + "/" + rep.Service.Name + ":" + rep.Service.Port + " " + rep.Service.Entry
			}
			if got != tc.service {
				t.Errorf("service %q, want %q", got, tc.service)
			}
		})
	}
}

// TestMasqueradeReasons: each rule that asks for masquerading is named.
func TestMasqueradeReasons(t *testing.T) {
	for _, tc := range []struct {
		name, fixture, src, dst string
		from                    explain.Origin
		want                    string
	}{
		{"off-cluster ClusterIP", "nodeport", "192.0.2.7", "10.96.0.20:80", "", "ClusterIP traffic from outside the cluster CIDRs (10.244.0.0/16)"},
		{"external traffic, eTP Cluster", "nodeport", "192.0.2.7", "198.51.100.1:30080", "", "under externalTrafficPolicy: Cluster"},
		{"the node to an eTP Local entry", "etp-local", "", "203.0.113.20:80", explain.Node, "sent by this node itself to an externalTrafficPolicy: Local entry"},
		{"hairpin", "nodeport", "10.244.1.3", "10.96.0.20:80", "", "hairpin: the endpoint picked is the client itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx, rs := load(t, tc.fixture)
			r := request(tc.src, tc.dst, "tcp", tc.from)
			rep, err := explain.Trace(rs[nft.IPv4], r, withCluster(fx))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, o := range rep.Outcomes {
				if o.Masquerade != nil && strings.Contains(strings.Join(o.Masquerade.Reasons, "\n"), tc.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no outcome masqueraded for %q:\n%s", tc.want, strings.Join(summary(rep), "\n"))
			}
		})
	}
}

// TestHealthCheckNodePort: the drop under externalTrafficPolicy: Local
// names the health check that keeps load balancers away, when the Service
// has one.
func TestHealthCheckNodePort(t *testing.T) {
	fx, _ := load(t, "etp-local")
	for i := range fx.Snapshot.Slices {
		if s := &fx.Snapshot.Slices[i]; s.Service == "lb" {
			s.Endpoints = s.Endpoints[1:] // only the endpoint on node-2 is left
		}
	}
	rs, _ := fx.Compile()
	rep, err := explain.Trace(rs[nft.IPv4], request("192.0.2.7", "203.0.113.20:80", "tcp", ""), withCluster(fx))
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, summary(rep), []string{"1 drop 203.0.113.20:80: demo/lb:http (load-balancer IP): externalTrafficPolicy: Local, " +
		"and no endpoint of it is on this node: traffic from outside the cluster is dropped here (Pods and the node itself would " +
		"still reach endpoints on other nodes); its healthCheckNodePort 32000 answers 503 on this node, so a load balancer " +
		"that checks it sends no traffic here"})
}

// TestUnknownRules: a rule this package does not know, such as a drop a
// newer nftproxy (or someone else) added to cluster-ips-check, is
// explained by its comment, and without one by its text.
func TestUnknownRules(t *testing.T) {
	for _, tc := range []struct {
		comment, want string
	}{
		{"Address in a quarantined range", "1 drop 10.96.0.99:80: Address in a quarantined range (drop rule 0 of chain cluster-ips-check)"},
		{"", "1 drop 10.96.0.99:80: dropped by rule 0 of chain cluster-ips-check: ip daddr @quarantine drop"},
	} {
		fx, rs := load(t, "clusterip")
		tbl := rs[nft.IPv4]
		tbl.Sets = append(tbl.Sets, &nft.Set{Name: "quarantine", Key: []nft.DataType{nft.TypeIPv4Addr}, Interval: true,
			Elements: []nft.Element{{Key: []nft.Value{{Prefix: mustPrefix("10.96.0.0/16")}}}}})
		c := tbl.Chain("cluster-ips-check")
		unallocated := nft.Rule{Stmts: []nft.Stmt{nft.InSet{Keys: []nft.Field{nft.Daddr}, Set: "quarantine"}, nft.Verdict{Kind: nft.Drop}},
			Comment: tc.comment}
		c.Rules = append([]nft.Rule{unallocated}, c.Rules...)
		rep, err := explain.Trace(tbl, request("10.244.1.9", "10.96.0.99:80", "tcp", ""), withCluster(fx))
		if err != nil {
			t.Fatal(err)
		}
		wantLines(t, summary(rep), []string{tc.want})
	}
}

// TestAffinity: the choice is remembered for the Service's timeout; with
// the kernel's memory read, a remembered client goes back to its endpoint
// for sure, and the report says for how long.
func TestAffinity(t *testing.T) {
	fx, rs := load(t, "affinity")
	r := request("10.244.9.9", "10.96.0.60:80", "tcp", "")
	o := tableOnly(fx)
	rep, err := explain.Trace(rs[nft.IPv4], r, o)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, summary(rep), []string{"1/2 accept 10.244.1.9:8080", "1/2 accept 10.244.2.9:8080"})
	for _, out := range rep.Outcomes {
		if a := out.Affinity; a == nil || a.TimeoutSeconds != 600 || a.Remembered || !strings.Contains(a.Text, "remembered for 10m0s") {
			t.Errorf("affinity %+v, want a 600 s memory of a new choice", a)
		}
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "session-affinity memory was not read") {
		t.Errorf("notes %q do not say the memory was not read", rep.Notes)
	}
	// The client was sent to 10.244.2.9: the element its choice recorded.
	rec := rep.Outcomes[1].Steps
	var id uint32
	for _, s := range rec {
		if strings.Contains(s.Text, "update @affinity") {
			id = affinityID(t, s.Text)
		}
	}
	o.MemoryRead = true
	o.Memory = []explain.Remembered{{Client: r.Src, ID: id, Expires: 552e9}}
	rep, err = explain.Trace(rs[nft.IPv4], r, o)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, summary(rep), []string{"1 accept 10.244.2.9:8080"})
	if a := rep.Outcomes[0].Affinity; a == nil || !a.Remembered || a.ExpiresInSeconds != 552 ||
		!strings.Contains(a.Text, "remembered with this endpoint for another 9m12s") {
		t.Errorf("affinity %+v, want remembered for another 552 s", a)
	}
}

// TestSourceRangesAsReadBack: read back from the kernel, every address
// part of an interval element is a prefix, the load-balancer IP too; the
// allowed ranges are found all the same.
func TestSourceRangesAsReadBack(t *testing.T) {
	fx, rs := load(t, "source-ranges")
	s := rs[nft.IPv4].Set("firewall-allow")
	for i, e := range s.Elements {
		k := append([]nft.Value(nil), e.Key...)
		k[0] = nft.Value{Prefix: netip.PrefixFrom(k[0].Addr, 32)}
		s.Elements[i].Key = k
	}
	rep, err := explain.Trace(rs[nft.IPv4], request("203.0.113.7", "203.0.113.30:443", "tcp", ""), tableOnly(fx))
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, summary(rep), []string{"(allowed: 192.0.2.0/24, 198.51.100.0/24, 203.0.113.30/32)"})
}

// TestRequestErrors: a request that does not fit the table names its flag.
func TestRequestErrors(t *testing.T) {
	fx, rs := load(t, "clusterip")
	for _, tc := range []struct {
		r    explain.Request
		flag string
	}{
		{request("fd00::1", "10.96.0.10:80", "tcp", ""), "src"},
		{request("", "10.96.0.10:80", "tcp", ""), "src"},
		{request("10.0.0.1", "10.96.0.10:80", "tcp", explain.Node), "from"},
		{request("198.51.100.1", "10.96.0.10:80", "tcp", explain.Pod), "from"},
		{request("10.0.0.1", "[fd00::1]:80", "tcp", ""), "dst"},
	} {
		_, err := explain.Trace(rs[nft.IPv4], tc.r, withCluster(fx))
		var re *explain.RequestError
		if !errors.As(err, &re) || re.Flag != tc.flag {
			t.Errorf("%+v: error %v, want one naming --%s", tc.r, err, tc.flag)
		}
	}
}

// TestCounterOfADrop: each drop and reject names the counter object it
// counts into, and what it has counted when the counters were read; an
// accepted packet names none.
func TestCounterOfADrop(t *testing.T) {
	fx, rs := load(t, "no-endpoints")
	dst := noEndpointsDst(t, rs[nft.IPv4])
	for _, tc := range []struct {
		name    string
		counted map[nft.Family]map[string]uint64
		want    *uint64
	}{
		{"not read", nil, nil},
		{"read", map[nft.Family]map[string]uint64{nft.IPv4: {nft.CounterRejectNoEndpoints: 42}}, ptr(uint64(42))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tableOnly(fx)
			o.Counted = tc.counted
			rep, err := explain.Trace(rs[nft.IPv4], request("192.0.2.7", dst, "tcp", ""), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Outcomes) != 1 || rep.Outcomes[0].Counter != nft.CounterRejectNoEndpoints {
				t.Fatalf("outcomes %+v, want one rejected into %s", rep.Outcomes, nft.CounterRejectNoEndpoints)
			}
			if diff := cmp.Diff(tc.want, rep.Outcomes[0].CounterPackets); diff != "" {
				t.Errorf("counted (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// noEndpointsDst is the first entry of no-endpoint-services that rejects,
// as "IP:PORT".
func noEndpointsDst(t *testing.T, tbl *nft.Table) string {
	t.Helper()
	for _, e := range tbl.Set(nft.MapNoEndpointServices).Elements {
		if e.Verdict.Chain == nft.ChainReject {
			return netip.AddrPortFrom(e.Key[0].Addr, uint16(e.Key[2].Num)).String()
		}
	}
	t.Fatal("no rejecting entry")
	return ""
}
