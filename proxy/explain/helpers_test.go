package explain_test

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile/fixture"
	"github.com/nftproxy/nftproxy/proxy/explain"
)

// load compiles the golden fixture called name (proxy/compile/testdata).
func load(t *testing.T, name string) (*fixture.Fixture, nft.Ruleset) {
	t.Helper()
	fx, err := fixture.Load(filepath.Join(fixture.Dir(), name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := fx.Compile()
	return fx, rs
}

// withCluster are the options of a trace of fx's compiled manifests.
func withCluster(fx *fixture.Fixture) explain.Options {
	return explain.Options{Source: "manifests", LocalAddrs: fx.Node.IPs, PodCIDRs: fx.Node.PodCIDRs,
		Cluster: &explain.Cluster{Snapshot: &fx.Snapshot, Node: fx.Node.Name}}
}

// tableOnly are the options of a trace of the table alone, as read from
// the kernel without manifests.
func tableOnly(fx *fixture.Fixture) explain.Options {
	return explain.Options{Source: "kernel", LocalAddrs: fx.Node.IPs}
}

func request(src, dst, proto string, from explain.Origin) explain.Request {
	r := explain.Request{Dst: netip.MustParseAddrPort(dst), From: from}
	r.Proto, _ = explain.ProtoNumber(proto)
	if src != "" {
		r.Src = netip.MustParseAddr(src)
	}
	return r
}

// summary renders outcomes one a line: probability, verdict, destination,
// "masq" when masqueraded, and the reason.
func summary(rep *explain.Report) []string {
	var out []string
	for _, o := range rep.Outcomes {
		s := fmt.Sprintf("%s %s %s", o.Probability, o.Verdict, o.Destination)
		if o.Masquerade != nil {
			s += " masq"
		}
		if o.Reason != "" {
			s += ": " + o.Reason
		}
		out = append(out, s)
	}
	return out
}

// wantLines checks that each of got holds its want as a substring.
func wantLines(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outcomes, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("outcome %d:\n got: %s\nwant: %s", i, got[i], want[i])
		}
	}
}
