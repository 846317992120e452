package compile

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ep builds a candidate at 10.0.0.n; flags: r ready, s serving, t
// terminating, l local.
func ep(n byte, flags string, zones, nodes []string) candidate {
	c := candidate{endpoint: endpoint{netip.AddrFrom4([4]byte{10, 0, 0, n}), 80}, hintZones: zones, hintNodes: nodes}
	for _, f := range flags {
		switch f {
		case 'r':
			c.ready, c.serving = true, true
		case 's':
			c.serving = true
		case 't':
			c.terminating = true
		case 'l':
			c.local = true
		}
	}
	return c
}

func addrs(eps []endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.addr.String())
	}
	return out
}

func TestCategorize(t *testing.T) {
	zA, zB := []string{"a"}, []string{"b"}
	cluster, local, both := usesOf(false, false), usesOf(true, true), usesOf(false, true)
	tests := []struct {
		name    string
		eps     []candidate
		use     policyUse
		zone    string
		cluster []string
		local   []string
		any     bool
	}{
		{name: "no endpoints", use: both},
		{name: "ready only, not-ready skipped", use: cluster,
			eps:     []candidate{ep(1, "r", nil, nil), ep(2, "", nil, nil)},
			cluster: []string{"10.0.0.1"}, any: true},
		{name: "terminating used when none ready",
			use: cluster, eps: []candidate{ep(1, "st", nil, nil), ep(2, "t", nil, nil)},
			cluster: []string{"10.0.0.1"}, any: true},
		{name: "terminating ignored while one is ready",
			use: cluster, eps: []candidate{ep(1, "st", nil, nil), ep(2, "r", nil, nil)},
			cluster: []string{"10.0.0.2"}, any: true},
		{name: "local policy only: local ready endpoints",
			use: local, eps: []candidate{ep(1, "r", nil, nil), ep(2, "rl", nil, nil)},
			local: []string{"10.0.0.2"}, any: true},
		{name: "local policy, only remote endpoints: none, but some exist",
			use: local, eps: []candidate{ep(1, "r", nil, nil)}, any: true},
		{name: "local falls back to local terminating independently of cluster",
			use: both, eps: []candidate{ep(1, "r", nil, nil), ep(2, "stl", nil, nil)},
			cluster: []string{"10.0.0.1"}, local: []string{"10.0.0.2"}, any: true},
		{name: "remote terminating does not count as local",
			use: both, eps: []candidate{ep(1, "st", nil, nil)},
			cluster: []string{"10.0.0.1"}, any: true},
		{name: "zone hints select this zone",
			use: cluster, zone: "a", eps: []candidate{ep(1, "r", zA, nil), ep(2, "r", zB, nil)},
			cluster: []string{"10.0.0.1"}, any: true},
		{name: "zone hints for other zones only: all endpoints",
			use: cluster, zone: "c", eps: []candidate{ep(1, "r", zA, nil), ep(2, "r", zB, nil)},
			cluster: []string{"10.0.0.1", "10.0.0.2"}, any: true},
		{name: "node without zone label: hints ignored",
			use: cluster, eps: []candidate{ep(1, "r", zA, nil), ep(2, "r", zB, nil)},
			cluster: []string{"10.0.0.1", "10.0.0.2"}, any: true},
		{name: "one ready endpoint without hint: hints ignored",
			use: cluster, zone: "a", eps: []candidate{ep(1, "r", zA, nil), ep(2, "r", nil, nil)},
			cluster: []string{"10.0.0.1", "10.0.0.2"}, any: true},
		{name: "hints of not-ready endpoints do not matter",
			use: cluster, zone: "a", eps: []candidate{ep(1, "r", zA, nil), ep(2, "r", zB, nil), ep(3, "", nil, nil)},
			cluster: []string{"10.0.0.1"}, any: true},
		{name: "node hints win over zone hints",
			use: cluster, zone: "a", eps: []candidate{ep(1, "r", zA, []string{"other"}), ep(2, "r", zA, []string{"node1"})},
			cluster: []string{"10.0.0.2"}, any: true},
		{name: "node hints not for this node: zone hints",
			use: cluster, zone: "b", eps: []candidate{ep(1, "r", zA, []string{"x"}), ep(2, "r", zB, []string{"y"})},
			cluster: []string{"10.0.0.2"}, any: true},
		{name: "topology does not narrow the local set",
			use: both, zone: "a", eps: []candidate{ep(1, "r", zA, nil), ep(2, "rl", zB, nil)},
			cluster: []string{"10.0.0.1"}, local: []string{"10.0.0.2"}, any: true},
		{name: "terminating fallback ignores topology",
			use: cluster, zone: "a", eps: []candidate{ep(1, "st", zB, nil)},
			cluster: []string{"10.0.0.1"}, any: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := categorize(tc.eps, tc.use, "node1", tc.zone)
			if diff := cmp.Diff(tc.cluster, addrs(got.cluster)); diff != "" {
				t.Errorf("cluster (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.local, addrs(got.local)); diff != "" {
				t.Errorf("local (-want +got):\n%s", diff)
			}
			if got.any != tc.any {
				t.Errorf("any = %t, want %t", got.any, tc.any)
			}
		})
	}
}
