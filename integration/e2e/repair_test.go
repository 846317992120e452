//go:build integration

package e2e_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// TestRepairsTamperedTable changes nftproxy's table from outside with nft
// in the node namespace and waits until nftproxy has restored it: the
// listing is the one from before and the Service answers again. Each
// change is one repair, from the kernel's notifications (none lost); a
// change to another table, none.
func TestRepairsTamperedTable(t *testing.T) {
	env := e2e.New(t, 2)
	env.StartProxy(t, e2e.MetricsArg)
	b := env.Lab.Backends
	web := "10.96.4.10:80"
	env.Create(t, e2e.Service("web", "10.96.4.10", e2e.TCPPort("http", 80, 30040)))
	env.Create(t, e2e.Slice("web", "http", b[0].IPv4, b[1].IPv4))
	e2e.Eventually(t, "web answered by both pods", env.AnsweredBy(web, 20, b[0].Name, b[1].Name))
	want := listing(t, env)

	tampers := []struct {
		name string
		nft  string
	}{
		{"delete a cluster-ip-ports element", "delete element ip kube-proxy cluster-ip-ports { 10.96.4.10 . tcp . 80 }"},
		{"flush the chain that picks endpoints", "flush chain ip kube-proxy pick-endpoint"},
		{"delete an endpoint element", "delete element ip kube-proxy endpoints-2 { 10.96.4.10 . tcp . 80 . 0 }"},
		{"add a rule", "add rule ip kube-proxy services ip daddr 10.96.4.10 drop"},
		{"delete the table", "delete table ip kube-proxy"},
	}
	repaired := metric(t, env, "nftproxy_external_changes_repaired_total")
	for i, tc := range tampers {
		if i == len(tampers)-1 {
			env.Lab.Node.MustExec(t, "nft", "add table ip other; add chain ip other c")
		}
		t.Run(tc.name, func(t *testing.T) {
			env.Lab.Node.MustExec(t, "nft", tc.nft)
			e2e.Eventually(t, "table restored", func() error {
				if diff := cmp.Diff(want, listing(t, env)); diff != "" {
					return fmt.Errorf("listing (-want +got):\n%s", diff)
				}
				return nil
			})
			e2e.Eventually(t, "web answers again", env.AnsweredBy(web, 20, b[0].Name, b[1].Name))
		})
	}
	// The agent counts a repair just after it commits.
	e2e.Eventually(t, "one repair per change to our table, none for the other table", func() error {
		if got := metric(t, env, "nftproxy_external_changes_repaired_total") - repaired; got != float64(len(tampers)) {
			return fmt.Errorf("%v repairs, want %d", got, len(tampers))
		}
		return nil
	})
	if got := metric(t, env, "nftproxy_notifications_lost_total"); got != 0 {
		t.Errorf("%v notifications lost, want 0", got)
	}
	if _, err := env.Lab.Node.Exec("nft", "list", "chain", "ip", "other", "c"); err != nil {
		t.Errorf("the other table's chain: %v", err)
	}
}

func metric(t *testing.T, env *e2e.Env, name string) float64 {
	t.Helper()
	v, err := env.Metric(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// counters matches the counts in a listing, which traffic changes.
var counters = regexp.MustCompile(`(packets|bytes) \d+`)

// listing returns the lines of `nft list table ip kube-proxy` in the node
// namespace, sorted: the kernel lists set elements in hash order, which a
// re-created set may change. Counter values are blanked.
func listing(t *testing.T, env *e2e.Env) []string {
	t.Helper()
	out, err := env.Lab.Node.Exec("nft", "list", "table", "ip", "kube-proxy")
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	lines := strings.Split(counters.ReplaceAllString(out, "$1 N"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSpace(l), ",")
	}
	slices.Sort(lines)
	return lines
}
