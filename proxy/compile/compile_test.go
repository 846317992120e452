package compile_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// TestCompileConflictAcrossMaps: a Service IP and port is claimed once,
// whether the Service that claims it has endpoints or not.
func TestCompileConflictAcrossMaps(t *testing.T) {
	snap := synth.Plain(2, 2)
	snap.Slices[0].Endpoints = nil // ns/svc-0 has no endpoints and sorts first
	snap.Services[1].ExternalIPs = []netip.Addr{snap.Services[0].ClusterIPs[0]}
	rs, problems := compile.Ruleset(snap, testNode, compile.DefaultOptions())
	want := []string{"Service ns/svc-1: spec.externalIPs[0]: 10.96.0.0 . tcp . 80 is already used by Service ns/svc-0"}
	if diff := cmp.Diff(want, problemTexts(problems)); diff != "" {
		t.Fatalf("problems (-want +got):\n%s", diff)
	}
	for _, e := range rs[nft.IPv4].Set("external-ip-ports").Elements {
		if e.Key[0].Addr == snap.Services[0].ClusterIPs[0] {
			t.Fatalf("external-ip-ports has the key owned by ns/svc-0: %v", e)
		}
	}
}

// The traffic-policy fields are all programmed now: none of them is
// reported as a Problem.
func TestCompilePolicyFieldsAreNoProblem(t *testing.T) {
	snap := synth.Plain(1, 1)
	svc := &snap.Services[0]
	svc.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	svc.ExternalLocal, svc.InternalLocal, svc.AffinitySeconds = true, true, 60
	svc.TrafficDistribution = "PreferClose"
	if _, problems := compile.Ruleset(snap, testNode, compile.DefaultOptions()); len(problems) > 0 {
		t.Errorf("problems: %v", problemTexts(problems))
	}
}

func TestCompileUnknownProtocolSkipsOnlyThatPort(t *testing.T) {
	snap := synth.Plain(1, 1)
	snap.Services[0].Ports = append(snap.Services[0].Ports, model.ServicePort{Name: "x", Protocol: "ICMP", Port: 1})
	rs, problems := compile.Ruleset(snap, testNode, compile.DefaultOptions())
	if len(problems) != 1 || problems[0].Field != "spec.ports[1].protocol" {
		t.Fatalf("problems = %v", problems)
	}
	if got := rs[nft.IPv4].Set("cluster-ip-ports").Elements; len(got) != 1 || got[0].Key[2].Num != 80 {
		t.Fatalf("the valid port was not compiled: cluster-ip-ports holds %v", got)
	}
}

func problemTexts(ps []compile.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Error())
	}
	return out
}

// TestStatusNoLocalEndpoints: the Service ports whose Local traffic policy
// finds no endpoint on this node, counted per policy and family as
// kube-proxy's sync_proxy_rules_no_local_endpoints_total; a port without
// any endpoint, or with one here, is not counted.
func TestStatusNoLocalEndpoints(t *testing.T) {
	ep := func(ip, node string) model.Endpoint {
		return model.Endpoint{Addresses: []netip.Addr{netip.MustParseAddr(ip)}, Ready: true, Serving: true, NodeName: node}
	}
	svc := func(name, ip string, itp, etp bool, ports int) model.Service {
		s := model.Service{Namespace: "ns", Name: name, Type: model.NodePort, ClusterIPs: []netip.Addr{netip.MustParseAddr(ip)},
			InternalLocal: itp, ExternalLocal: etp}
		for i := range ports {
			s.Ports = append(s.Ports, model.ServicePort{Name: fmt.Sprint("p", i), Protocol: model.TCP, Port: uint16(80 + i), NodePort: uint16(30080 + i)})
		}
		return s
	}
	slice := func(name string, eps ...model.Endpoint) model.EndpointSlice {
		s := model.EndpointSlice{Namespace: "ns", Name: name, Service: name, AddressType: model.IPv4, Endpoints: eps}
		if eps[0].Addresses[0].Is6() {
			s.AddressType = model.IPv6
		}
		for i := range 2 {
			s.Ports = append(s.Ports, model.EndpointPort{Name: fmt.Sprint("p", i), Protocol: model.TCP, Port: 8080})
		}
		return s
	}
	snap := &model.Snapshot{
		Services: []model.Service{
			svc("itp-elsewhere", "10.96.0.1", true, false, 2), // 2 ports: internal 2
			svc("etp-elsewhere", "10.96.0.2", false, true, 1), // external 1
			svc("both-elsewhere", "fd00::3", true, true, 1),   // IPv6: internal 1, external 1
			svc("itp-here", "10.96.0.4", true, true, 1),       // an endpoint here: none
			svc("itp-none", "10.96.0.5", true, true, 1),       // no endpoints: rejected, not counted
		},
		Slices: []model.EndpointSlice{
			slice("itp-elsewhere", ep("10.0.2.1", "node-2")),
			slice("etp-elsewhere", ep("10.0.2.2", "node-2")),
			slice("both-elsewhere", ep("fd00:10::2", "node-2")),
			slice("itp-here", ep("10.0.2.4", "node-2"), ep("10.0.1.4", testNode.Name)),
		},
	}
	want := []compile.FamilyStatus{
		{Family: nft.IPv4, NoLocalInternal: 2, NoLocalExternal: 1},
		{Family: nft.IPv6, NoLocalInternal: 1, NoLocalExternal: 1},
	}
	if diff := cmp.Diff(want, compile.New(snap, testNode, compile.DefaultOptions()).Status()); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
}
