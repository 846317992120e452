package nft

import (
	"fmt"
	"net/netip"
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
	return string(s.appendDataText(make([]byte, 0, 32), data))
}

func (s *Set) appendDataText(b []byte, data []Value) []byte {
	for i, v := range data {
		if i > 0 {
			b = append(b, " . "...)
		}
		t := TypeInetService
		if i < len(s.Data) {
			t = s.Data[i]
		}
		b = appendValueText(b, t, v)
	}
	return b
}

// addrValueText renders an address key part: a prefix in interval sets,
// printed as a bare address when it covers one address, as nft does.
func addrValueText(v Value) string {
	return string(appendAddrValueText(nil, v))
}

func appendAddrValueText(b []byte, v Value) []byte {
	switch {
	case !v.Prefix.IsValid():
		return appendAddr(b, v.Addr)
	case v.Prefix.IsSingleIP():
		return appendAddr(b, v.Prefix.Addr())
	}
	return v.Prefix.Masked().AppendTo(b)
}

// appendAddr appends a's text as String writes it ("invalid IP" for the
// zero Addr, which AppendTo writes as nothing).
func appendAddr(b []byte, a netip.Addr) []byte {
	if !a.IsValid() {
		return append(b, a.String()...)
	}
	return a.AppendTo(b)
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
