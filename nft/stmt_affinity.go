package nft

import (
	"fmt"
	"strconv"
	"strings"
)

// UpdateSet adds the concatenation of Keys to a dynamic map, mapped to
// Data, or refreshes the timeout of an element already there (keeping its
// data): `update @affinity { key timeout 3h : data }`. Session affinity
// records the endpoint a client was sent to with it.
type UpdateSet struct {
	Set     string
	Keys    []Field
	Timeout uint32  // seconds
	Data    []Value // an address and a port; none for a set
}

// DNATMap rewrites the destination to the address and port a data map holds
// for the concatenation of Keys; when the map holds nothing for the key the
// rule ends there, like a failed match: `dnat ip to key map @affinity`.
type DNATMap struct {
	Keys []Field
	Map  string
}

func (u UpdateSet) text(f Family) string {
	data := make([]string, len(u.Data))
	for i, v := range u.Data {
		data[i] = strconv.Itoa(int(v.Num))
		if v.Addr.IsValid() {
			data[i] = v.Addr.String()
		}
	}
	text := fmt.Sprintf("update @%s { %s timeout %s", u.Set, keysText(f, u.Keys), durationText(u.Timeout))
	if len(data) > 0 {
		text += " : " + strings.Join(data, " . ")
	}
	return text + " }"
}

func (d DNATMap) text(f Family) string {
	return fmt.Sprintf("dnat %s to %s map @%s", f, keysText(f, d.Keys), d.Map)
}
