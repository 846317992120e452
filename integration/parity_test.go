//go:build integration

package integration

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/manifest"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestParity proves that our netlink encoding is nft's: the same ruleset
// committed by the netlink applier in one namespace and loaded from its
// text with `nft -f` in another lists identically, byte for byte; that nft
// prints every rule we write without complaint; and that the listing is
// our text, up to how nft orders and wraps set elements.
func TestParity(t *testing.T) {
	res, err := manifest.Load([]string{"../examples"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Nodes) != 1 {
		t.Fatalf("examples: %d Nodes, want 1", len(res.Nodes))
	}
	local := compile.DefaultOptions()
	local.LocalCIDRs = []netip.Prefix{lab.ClusterCIDRv4, lab.ClusterCIDRv6}
	masqAll := compile.DefaultOptions()
	masqAll.MasqueradeAll, masqAll.MasqueradeBit = true, 3
	both := res.Snapshot
	mixed := mixedSnapshot()
	both.Services = append(slices.Clone(both.Services), mixed.Services...)
	both.Slices = append(slices.Clone(both.Slices), mixed.Slices...)
	for _, tc := range []struct {
		name string
		snap model.Snapshot
		opts compile.Options
	}{
		{"examples", res.Snapshot, compile.DefaultOptions()}, // what `nftproxy compile -f examples` prints
		{"examples+mixed, local CIDRs", both, local},
		{"mixed, masquerade all", mixed, masqAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, problems := compile.Ruleset(&tc.snap, res.Nodes[0], tc.opts)
			if len(problems) > 0 {
				t.Fatalf("compile: %v", problems)
			}
			assertParity(t, rs)
		})
	}
}

// assertParity applies rs over netlink in namespace A, loads its text
// with nft in namespace B, and compares the listings of both tables.
func assertParity(t *testing.T, rs nft.Ruleset) {
	t.Helper()
	a, _ := applied(t, "netlink", rs)
	b := lab.NewNS(t, "nft")
	loadText(t, b, rs.Text())
	for _, f := range nft.Families {
		listA := nftIn(t, a, "list", "table", string(f), nft.TableName)
		listB := nftIn(t, b, "list", "table", string(f), nft.TableName)
		if diff := diffLines(listB, listA); diff != "" {
			t.Errorf("table %s: listing (-nft -f +netlink):\n%s", f, diff)
		}
		if diff := diffLines(normaliseElements(rs[f].Text()), normaliseElements(listA)); diff != "" {
			t.Errorf("table %s: (-compiled text +netlink listing), elements normalised:\n%s", f, diff)
		}
	}
}

// loadText loads text into ns with `nft -f`: the compiled text must be
// valid input for the nft binary an operator has (1.0.6 on Debian 12).
func loadText(t *testing.T, ns *lab.NS, text string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ruleset.nft")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runIn(ns, "nft", "-f", file); err != nil || stderr != "" {
		t.Fatalf("nft -f rejects the compiled text: %v\n%s", err, stderr)
	}
}

// normaliseElements rewrites each `elements = { ... }` block of nft text as
// one line with its elements sorted, since nft orders and wraps elements
// its own way. Every other line is left as it is.
func normaliseElements(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		head, body, ok := strings.Cut(lines[i], "elements = { ")
		if !ok {
			out = append(out, lines[i])
			continue
		}
		for !strings.HasSuffix(body, "}") && i+1 < len(lines) {
			i++
			body += " " + lines[i]
		}
		var elems []string
		for _, e := range strings.Split(strings.TrimSuffix(body, "}"), ",") {
			elems = append(elems, strings.Join(strings.Fields(e), " "))
		}
		slices.Sort(elems)
		out = append(out, head+"elements = { "+strings.Join(elems, ", ")+" }")
	}
	return strings.Join(out, "\n")
}
