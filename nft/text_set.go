package nft

import (
	"fmt"
	"strings"
)

// flagsText renders the size and flags lines of a set, in the order nft
// lists them.
func (s *Set) flagsText() string {
	var b strings.Builder
	if s.Size > 0 {
		fmt.Fprintf(&b, "\t\tsize %d\n", s.Size)
	}
	switch {
	case s.Dynamic:
		b.WriteString("\t\tflags dynamic,timeout\n")
	case s.Interval:
		b.WriteString("\t\tflags interval\n")
	}
	return b.String()
}

// dataTypeText renders what a map's elements map to: "verdict", or the
// value types of a data map.
func (s *Set) dataTypeText() string {
	if len(s.Data) == 0 {
		return "verdict"
	}
	parts := make([]string, len(s.Data))
	for i, d := range s.Data {
		parts[i] = string(d)
	}
	return strings.Join(parts, " . ")
}

// DataText renders a data map element's value: "10.244.1.2 . 8080".
func (s *Set) DataText(data []Value) string {
	parts := make([]string, len(data))
	for i, v := range data {
		t := TypeInetService
		if i < len(s.Data) {
			t = s.Data[i]
		}
		parts[i] = valueText(t, v)
	}
	return strings.Join(parts, " . ")
}

// addrValueText renders an address key part: a prefix in interval sets,
// printed as a bare address when it covers one address, as nft does.
func addrValueText(v Value) string {
	if !v.Prefix.IsValid() {
		return v.Addr.String()
	}
	if v.Prefix.IsSingleIP() {
		return v.Prefix.Addr().String()
	}
	return v.Prefix.Masked().String()
}

// durationText renders seconds as nft lists a timeout: "3h", "1m30s",
// "1d2h3m4s".
func durationText(seconds uint32) string {
	if seconds == 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		size uint32
		name string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}} {
		if n := seconds / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			seconds -= n * u.size
		}
	}
	return b.String()
}
