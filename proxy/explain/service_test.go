package explain_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

// entryLines renders a Service report one line per entry and client.
func entryLines(rep *explain.ServiceReport) []string {
	var out []string
	for _, e := range rep.Entries {
		for _, tr := range e.Traces {
			out = append(out, fmt.Sprintf("%s %s %s/%s from %s %s: %s", e.Family, e.Entry, e.Destination, e.Proto,
				tr.From.Origin, tr.Packet.Src, strings.Join(summary(&tr), "; ")))
		}
	}
	return out
}

// TestService: every entry point of a Service, traced from a Pod, from
// outside and from the node; the reasons are those of single packets.
func TestService(t *testing.T) {
	fx, rs := load(t, "etp-local")
	rep, err := explain.Service(rs, "demo/np", withCluster(fx))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ip ClusterIP 10.96.0.41:53/udp from pod 10.244.0.10: 1 accept 10.244.2.6:5353",
		"ip ClusterIP 10.96.0.41:53/udp from external 203.0.113.99: 1 accept 10.244.2.6:5353 masq",
		"ip ClusterIP 10.96.0.41:53/udp from node 198.51.100.1: 1 accept 10.244.2.6:5353 masq",
		"ip NodePort 198.51.100.1:30053/udp from pod 10.244.0.10: 1 accept 10.244.2.6:5353",
		"ip NodePort 198.51.100.1:30053/udp from external 203.0.113.99: 1 drop 198.51.100.1:30053: demo/np:dns (NodePort): " +
			"externalTrafficPolicy: Local, and no endpoint of it is on this node: traffic from outside the cluster is dropped here " +
			"(Pods and the node itself would still reach endpoints on other nodes)",
		"ip NodePort 198.51.100.1:30053/udp from node 198.51.100.1: 1 accept 10.244.2.6:5353 masq",
	}
	if diff := cmp.Diff(want, entryLines(rep)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestServiceSourceRanges: a load-balancer IP with source ranges is traced
// from inside and outside them.
func TestServiceSourceRanges(t *testing.T) {
	fx, rs := load(t, "source-ranges")
	rep, err := explain.Service(rs, "demo/api", withCluster(fx))
	if err != nil {
		t.Fatal(err)
	}
	var lb []string
	for _, l := range entryLines(rep) {
		if strings.Contains(l, "load-balancer IP 203.0.113.30:443") {
			lb = append(lb, l)
		}
	}
	wantLines(t, lb, []string{
		"from pod 10.244.1.10: 1 drop 203.0.113.30:443: source 10.244.1.10 is outside the loadBalancerSourceRanges",
		"from external 192.0.2.1: 1 accept 10.244.1.4:8443 masq",
		"from external 203.0.113.99: 1 drop 203.0.113.30:443: source 203.0.113.99 is outside",
		"from node 198.51.100.1: 1 accept 10.244.1.4:8443 masq",
	})
	if e := rep.Entries[1]; strings.Join(e.AllowedSources, ",") != "192.0.2.0/24,198.51.100.0/24,203.0.113.30/32" {
		t.Errorf("allowed sources %v", e.AllowedSources)
	}
}

// TestServiceMissing: a Service the tables do not hold is no error.
func TestServiceMissing(t *testing.T) {
	fx, rs := load(t, "clusterip")
	rep, err := explain.Service(rs, "demo/nothing", withCluster(fx))
	if err != nil || len(rep.Entries) != 0 || len(rep.Notes) != 1 {
		t.Fatalf("report %+v, %v; want no entries and a note", rep, err)
	}
}

// TestCompare: a table that does what the objects say matches; one
// compiled from other endpoints, or without a port, does not, and the
// differences name the entry, the client and both outcomes.
func TestCompare(t *testing.T) {
	fx, rs := load(t, "nodeport")
	rep, err := explain.Service(rs, "demo/shop", withCluster(fx))
	if err != nil {
		t.Fatal(err)
	}
	if err := explain.Compare(rep, rs, rs, "manifests", withCluster(fx)); err != nil || !rep.Comparison.Matches {
		t.Fatalf("compared with itself: %+v, %v", rep.Comparison, err)
	}
	moved := fx.Snapshot
	moved.Slices = append(moved.Slices[:0:0], moved.Slices...)
	moved.Slices[0].Endpoints = moved.Slices[0].Endpoints[:1]
	moved.Services = append(moved.Services[:0:0], moved.Services...)
	moved.Services[0].Ports = append(moved.Services[0].Ports[:0:0], moved.Services[0].Ports...)
	moved.Services[0].Ports[0].NodePort = 30081
	desired, _ := compile.Ruleset(&moved, fx.Node, fx.Options)
	if err := explain.Compare(rep, rs, desired, "api-server", withCluster(fx)); err != nil {
		t.Fatal(err)
	}
	c := rep.Comparison
	got := strings.Join(c.Differences, "\n")
	for _, want := range []string{
		"NodePort tcp/30080 (port http): in this table, but not in what the API server's objects say",
		"NodePort tcp/30081 (port http): missing from this table, but in what the API server's objects say",
		"ClusterIP 10.96.0.20:80/tcp (port http) from a Pod (10.244.0.10): this table: 1/2 accept 10.244.1.3:8080, " +
			"1/2 accept 10.244.2.3:8080; what the API server's objects say: 1 accept 10.244.1.3:8080",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("differences lack %q:\n%s", want, got)
		}
	}
	if c.Matches || c.Against != "api-server" {
		t.Errorf("comparison %+v", c)
	}
}
