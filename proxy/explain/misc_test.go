package explain_test

import (
	"net/netip"
	"regexp"
	"strconv"
	"testing"
)

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

var affinityOffset = regexp.MustCompile(`update @affinity \{ ip6? saddr \. numgen random mod 1 offset (\d+)`)

// affinityID is the ID a rule's update @affinity records.
func affinityID(t *testing.T, rule string) uint32 {
	t.Helper()
	m := affinityOffset.FindStringSubmatch(rule)
	if m == nil {
		t.Fatalf("no affinity update in %q", rule)
	}
	id, err := strconv.ParseUint(m[1], 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(id)
}
