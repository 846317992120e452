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
// listing is the one from before and the Service answers again.
func TestRepairsTamperedTable(t *testing.T) {
	env := e2e.New(t, 2)
	env.StartProxy(t)
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
		{"delete an endpoint element", "delete element ip kube-proxy endpoints { 10.96.4.10 . tcp . 80 . 4 }"},
		{"add a rule", "add rule ip kube-proxy services ip daddr 10.96.4.10 drop"},
		{"delete the table", "delete table ip kube-proxy"},
	}
	for _, tc := range tampers {
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
