package kernel

import (
	"fmt"
	"sort"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// countInto counts the packet into a named counter object.
func countInto(c nft.CountInto) *expr.Objref {
	return &expr.Objref{Type: unix.NFT_OBJECT_COUNTER, Name: c.Counter}
}

func decodeCountInto(_ nft.Family, ex []expr.Any) (nft.Stmt, int) {
	o, ok := ex[0].(*expr.Objref)
	if !ok || o.Type != unix.NFT_OBJECT_COUNTER || o.Name == "" {
		return nil, 0
	}
	return nft.CountInto{Counter: o.Name}, 1
}

// CounterValue is what one counter object of our table has counted.
type CounterValue struct {
	Name           string
	Packets, Bytes uint64
}

// ReadCounters returns the counter objects of our table of family f, by
// name: one netlink dump of the table's objects, cheap enough for every
// scrape. A family without our table has none.
func (k *Kernel) ReadCounters(f nft.Family) ([]CounterValue, error) {
	kt := tableOf(f)
	out, err := k.readCounters(kt)
	if err != nil && nft.IsNotFound(err) {
		return nil, nil
	}
	return out, err
}

func (k *Kernel) readCounters(kt *nftables.Table) ([]CounterValue, error) {
	objs, err := k.conn.GetObjects(kt)
	if err != nil {
		return nil, fmt.Errorf("list counters: %w", err)
	}
	var out []CounterValue
	for _, o := range objs {
		// GetObjects dumps every table of the family: keep ours.
		if c, ok := o.(*nftables.CounterObj); ok && c.Table != nil && c.Table.Name == kt.Name {
			out = append(out, CounterValue{Name: c.Name, Packets: c.Packets, Bytes: c.Bytes})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
