package compile_test

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/compile"
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
	for _, e := range rs[nft.IPv4].Set("service-ips").Elements {
		if e.Key[0].Addr == snap.Services[0].ClusterIPs[0] {
			t.Fatalf("service-ips has the key owned by ns/svc-0: %v", e)
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
	if got := rs[nft.IPv4].Set("service-ips").Elements; len(got) != 1 || got[0].Key[2].Num != 80 {
		t.Fatalf("the valid port was not compiled: service-ips holds %v", got)
	}
}

func problemTexts(ps []compile.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Error())
	}
	return out
}
