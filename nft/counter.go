package nft

import (
	"fmt"
	"strings"
)

// Counter is a named counter object of the table (`counter NAME`): every
// rule that drops or rejects counts into the counter of its reason
// (CountInto), and the agent reads them over netlink when /metrics is
// scraped. Counters are part of the table's fixed structure: a table
// whose counters differ is replaced, as one whose sets differ. The name
// says what it counts: google/nftables cannot give an object a comment.
type Counter struct {
	Name string
}

// CountInto adds the packet to the named counter object of the table:
// `counter name "drop-source-range"`.
type CountInto struct{ Counter string }

func (c CountInto) text(Family) string { return fmt.Sprintf("counter name %q", c.Counter) }

// Counter returns the counter called name, or nil.
func (t *Table) Counter(name string) *Counter {
	for i := range t.Counters {
		if t.Counters[i].Name == name {
			return &t.Counters[i]
		}
	}
	return nil
}

// text renders the counter as `nft list table` does; a counter loaded from
// this text starts at zero.
func (c Counter) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\tcounter %s {\n", c.Name)
	b.WriteString("\t\tpackets 0 bytes 0\n\t}\n")
	return b.String()
}

// sameCounters reports whether a and b have the same counter objects.
func sameCounters(a, b *Table) bool {
	if len(a.Counters) != len(b.Counters) {
		return false
	}
	for _, c := range b.Counters {
		if o := a.Counter(c.Name); o == nil || *o != c {
			return false
		}
	}
	return true
}
