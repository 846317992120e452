package nft

import "fmt"

// UpdateSet adds the concatenation of Keys, then Num when used, to a
// dynamic set, or refreshes the timeout of the element already there:
// `update @affinity { ip saddr . numgen random mod 1 offset 42 timeout 3h }`.
// Session affinity records the endpoint a client was sent to with it.
type UpdateSet struct {
	Set     string
	Keys    []Field
	Num     Numgen
	Timeout uint32 // seconds
}

func (u UpdateSet) text(f Family) string {
	return fmt.Sprintf("update @%s { %s timeout %s }", u.Set, lookupKeyText(f, u.Keys, u.Num), durationText(u.Timeout))
}
