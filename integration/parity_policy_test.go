//go:build integration

package integration

import (
	"encoding/hex"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/manifest"
)

// TestParityPolicies extends TestParity to the goldens of the traffic
// policies, session affinity, source ranges and topology: what we commit
// over netlink lists as our text, and loads with nft -f to the same
// listing. Session affinity is only listed: nft 1.0.6 cannot load its
// lookups from text (it evaluates a concatenated key with a constant part,
// `... . th dport . 10.244.1.9 @affinity`, before it knows the set's type:
// "Can't parse symbolic invalid expressions"), although the kernel takes
// them over netlink and nft prints them (see untypedAddrs).
func TestParityPolicies(t *testing.T) {
	for _, name := range []string{"etp-local", "itp-local", "affinity", "source-ranges", "topology"} {
		t.Run(name, func(t *testing.T) {
			rs := compileGolden(t, filepath.Join("..", "proxy", "compile", "testdata", name+".txtar"))
			listed := assertListing(t, rs)
			if strings.Contains(rs.Text(), " @affinity update @affinity {") {
				return
			}
			b := lab.NewNS(t, "nft")
			loadText(t, b, rs.Text())
			for f, list := range listed {
				if diff := diffLines(nftIn(t, b, "list", "table", string(f), nft.TableName), list); diff != "" {
					t.Errorf("table %s: listing (-nft -f +netlink):\n%s", f, diff)
				}
			}
		})
	}
}

// compileGolden compiles the input.yaml section of a golden file.
func compileGolden(t *testing.T, file string) nft.Ruleset {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var input, options []byte
	for _, f := range ar.Files {
		switch f.Name {
		case "input.yaml":
			input = f.Data
		case "options.yaml":
			options = f.Data
		}
	}
	path := filepath.Join(t.TempDir(), "input.yaml")
	if err := os.WriteFile(path, input, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := manifest.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	opts := compile.DefaultOptions()
	if strings.Contains(string(options), "localCIDRs") {
		opts.LocalCIDRs = append(opts.LocalCIDRs, lab.ClusterCIDRv4)
	}
	rs, problems := compile.Ruleset(&res.Snapshot, res.Nodes[0], opts)
	if len(problems) > 0 {
		t.Fatalf("compile: %v", problems)
	}
	return rs
}

// assertListing applies rs over netlink, compares nft's listing with our
// text and what we decode back from the kernel with what we compiled, and
// returns the listings.
func assertListing(t *testing.T, rs nft.Ruleset) map[nft.Family]string {
	t.Helper()
	ns, k := applied(t, "netlink", rs)
	read, err := k.Read()
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffLines(rs.Text(), read.Text()); diff != "" {
		t.Errorf("read back (-compiled +decoded from the kernel):\n%s", diff)
	}
	out := map[nft.Family]string{}
	for f, table := range rs {
		list := nftIn(t, ns, "list", "table", string(f), nft.TableName)
		out[f] = list
		if diff := diffLines(normaliseElements(table.Text()), normaliseElements(untypedAddrs(list))); diff != "" {
			t.Errorf("table %s: (-compiled text +netlink listing):\n%s", f, diff)
		}
	}
	return out
}

// untyped is how nft 1.0.6 prints a constant inside a lookup key, whose
// type it does not take from the set: the endpoint address of a session
// affinity lookup lists as `0xaf40109 [invalid type]` (10.244.1.9).
var untyped = regexp.MustCompile(`0x([0-9a-f]+) \[invalid type\]`)

// untypedAddrs rewrites those constants as the addresses they hold (4 or
// 16 bytes), so that the comparison still checks every byte we encoded.
func untypedAddrs(list string) string {
	return untyped.ReplaceAllStringFunc(list, func(m string) string {
		digits := untyped.FindStringSubmatch(m)[1]
		width := 8
		if len(digits) > 8 {
			width = 32
		}
		b, err := hex.DecodeString(strings.Repeat("0", max(width-len(digits), 0)) + digits)
		a, ok := netip.AddrFromSlice(b)
		if err != nil || !ok {
			return m
		}
		return a.String()
	})
}
