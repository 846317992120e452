//go:build integration

package integration

import (
	"regexp"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile/fixture"
)

// TestListingReloads: the listing is for people and for nft. Each golden
// fixture is applied over netlink; `nft list table` of it (nft 1.0.6 on
// Debian 12) prints every rule with no `[invalid type]` and no raw hex
// but the packet-mark masks nft always prints in hex; the listing loads
// with `nft -f` into a fresh namespace and lists back identically, which is
// what an operator's save and restore (or diff) of our tables relies on.
func TestListingReloads(t *testing.T) {
	fixtures, err := fixture.All()
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, fx := range fixtures {
		t.Run(fx.Name(), func(t *testing.T) {
			rs, _ := fx.Compile()
			a, _ := applied(t, "listed", rs)
			for _, f := range nft.Families {
				if rs[f] == nil {
					continue
				}
				tables++
				listing := nftIn(t, a, "list", "table", string(f), nft.TableName)
				if bad := unreadable(listing); len(bad) > 0 {
					t.Errorf("table %s: nft lists what it cannot type:\n%s", f, strings.Join(bad, "\n"))
				}
				b := lab.NewNS(t, "reloaded")
				loadText(t, b, listing)
				if diff := diffLines(listing, nftIn(t, b, "list", "table", string(f), nft.TableName)); diff != "" {
					t.Errorf("table %s: listing after nft -f of the listing (-first +reloaded):\n%s", f, diff)
				}
			}
		})
	}
	t.Logf("%d fixtures, %d tables listed, reloaded and listed again", len(fixtures), tables)
}

// hexValue is a hexadecimal constant; markMask is how nft prints the
// packet-mark operations and a hash's seed, whose constants it always
// prints in hex.
var (
	hexValue = regexp.MustCompile(`0x[0-9a-f]+`)
	markMask = regexp.MustCompile(`meta mark (set meta mark [|^] |& )0x[0-9a-f]{8}( == 0x00000000)?| mod \d+ seed 0x[0-9a-f]+`)
)

// unreadable returns the lines of a listing that show a value nft could
// not type: "[invalid type]", or a hex constant outside a mark operation.
func unreadable(listing string) []string {
	var out []string
	for _, line := range strings.Split(listing, "\n") {
		if strings.Contains(line, "invalid type") || hexValue.MatchString(markMask.ReplaceAllString(line, "")) {
			out = append(out, line)
		}
	}
	return out
}

// TestUnreadable: the check catches what nft 1.0.6 printed for the affinity
// rules of the previous shape, and lets mark operations through.
func TestUnreadable(t *testing.T) {
	old := "\t\tip saddr . ip daddr . meta l4proto . th dport . 0x0901f40a [invalid type] @affinity update @affinity { ip saddr . ip daddr . meta l4proto . th dport . 0x0901f40a [invalid type] timeout 10m }"
	fine := "\t\tmeta mark & 0x00004000 == 0x00000000 return\n\t\tmeta mark set meta mark ^ 0x00004000\n\t\tip saddr . ip daddr @hairpin-endpoints meta mark set meta mark | 0x00004000" +
		"\n\t\tdnat ip to meta l4proto . th dport . jhash ip saddr . th sport . th dport mod 7 seed 0x2a offset 4294901760 map @nodeport-endpoints"
	if got := unreadable(old + "\n" + fine); len(got) != 1 || got[0] != old {
		t.Errorf("unreadable = %q, want just the old affinity rule", got)
	}
}
