package compile

import "testing"

// TestListMapNames: every endpoint map's name reads back as its kind and
// rung, no other name does, and every comment fits the kernel's user data.
func TestListMapNames(t *testing.T) {
	for m := range listMaps {
		for _, rung := range []int{1, 10, maxListLen, hashRung} {
			name := listMapName(m, rung)
			gm, grung, ok := parseListMap(name)
			if !ok || gm != m || grung != rung {
				t.Errorf("parseListMap(%q) = %d, %d, %v; want %d, %d, true", name, gm, grung, ok, m, rung)
			}
			if c := listComment(m, rung); len(c) > maxListComment {
				t.Errorf("%s: comment %q is %d bytes, over %d", name, c, len(c), maxListComment)
			}
		}
	}
	for _, name := range []string{"endpoints", "endpoints-0", "endpoints-01", "endpoints-x", "endpoints-65536",
		"endpoints--1", "local-endpoints-", "service-ips", "pick-endpoint-3"} {
		if m, rung, ok := parseListMap(name); ok {
			t.Errorf("parseListMap(%q) = %d, %d, true; want no endpoint map", name, m, rung)
		}
	}
}
