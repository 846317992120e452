package nft

import (
	"fmt"
	"strconv"
	"strings"
)

// InSetWith matches when the concatenation of Keys, then the constant
// parts Consts, is an element of Set: session affinity asks "was this
// client sent to this endpoint" with `ip saddr . ip daddr . meta l4proto .
// th dport . 10.244.1.9 @affinity`.
type InSetWith struct {
	Keys   []Field
	Consts []Value // addresses or ports, after the fields
	Set    string
}

// UpdateSet adds the concatenation of Keys and then Consts to a dynamic
// set, or refreshes the timeout of the element already there:
// `update @affinity { ip saddr . ... . 10.244.1.9 timeout 3h }`. Session
// affinity records the endpoint a client was sent to with it.
type UpdateSet struct {
	Set     string
	Keys    []Field
	Consts  []Value // addresses or ports, after the fields
	Timeout uint32  // seconds
}

func (m InSetWith) text(f Family) string {
	return concatText(f, m.Keys, m.Consts) + " @" + m.Set
}

func (u UpdateSet) text(f Family) string {
	return fmt.Sprintf("update @%s { %s timeout %s }", u.Set, concatText(f, u.Keys, u.Consts), durationText(u.Timeout))
}

// concatText renders a concatenation of fields and constants as nft does.
func concatText(f Family, keys []Field, consts []Value) string {
	parts := []string{keysText(f, keys)}
	for _, v := range consts {
		if v.Addr.IsValid() {
			parts = append(parts, v.Addr.String())
			continue
		}
		parts = append(parts, strconv.Itoa(int(v.Num)))
	}
	return strings.Join(parts, " . ")
}
