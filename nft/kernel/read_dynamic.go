package kernel

import (
	"fmt"
	"time"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// Timed is an element of a dynamic set and the time it has left.
type Timed struct {
	Element nft.Element
	Expires time.Duration
}

// ReadDynamic returns the elements of the dynamic set called name in our
// table of family f, each with the time it has left: the session-affinity
// memory, which Read leaves out because the packet path, not nftproxy,
// fills it. No such table or set gives none.
func (k *Kernel) ReadDynamic(f nft.Family, name string) ([]Timed, error) {
	kt := tableOf(f)
	sets, err := getSets(k.conn, kt)
	if nft.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sets of table %s %s: %w", f, kt.Name, err)
	}
	for _, ks := range sets {
		if ks.Name != name {
			continue
		}
		uds, err := k.setUserdata(kt)
		if err != nil {
			return nil, fmt.Errorf("list sets of table %s %s: %w", f, kt.Name, err)
		}
		s := decodeSet(f, ks, uds[name])
		var out []Timed
		err = k.readElements(ks, func(e nftables.SetElement) {
			out = append(out, Timed{Element: decodeElement(s, e), Expires: e.Expires})
		}, func() { out = out[:0] })
		return out, err
	}
	return nil, nil
}
