package compile

import (
	"maps"
	"slices"

	"github.com/nftproxy/nftproxy/nft"
)

// streamBatch is how many elements one AddElements operation of a Stream
// holds: enough that the operations cost nothing next to their elements,
// few enough that the elements being encoded take a megabyte or two.
const streamBatch = 1024

// Stream returns the plan that replaces our tables with c's, from unknown
// kernel state: the operations of nft.Diff(nil, c.Ruleset()), with every
// element Services claim in batches of at most streamBatch, made while
// the stream is applied. An applier that encodes operations as they come
// never holds the whole table's elements, where c.Ruleset() holds them all
// (50 MB at 10,000 Services x 10 endpoints). Elements come in the order of
// their packed keys, not of their text: the kernel takes them in any order.
func (c *Tables) Stream() *nft.Stream {
	return &nft.Stream{Full: true, Each: c.each}
}

func (c *Tables) each(emit func([]nft.Op) error) error {
	for fi, fs := range c.fams {
		if !fs.used() {
			if err := emit(nft.DeleteTableOps(fs.family)); err != nil {
				return err
			}
			continue
		}
		t := c.frame(fi)
		head, rules := nft.ReplaceTableOps(t)
		if err := emit(head); err != nil {
			return err
		}
		if err := c.emitElements(fi, t, emit); err != nil {
			return err
		}
		if err := emit(rules); err != nil {
			return err
		}
	}
	return nil
}

// emitElements emits the elements family fi's Services claim, into the
// sets of t, in batches.
func (c *Tables) emitElements(fi int, t *nft.Table, emit func([]nft.Op) error) error {
	fs := c.fams[fi]
	b := &batcher{t: t, emit: emit, bufs: map[string][]nft.Element{}}
	for _, key := range slices.Sorted(maps.Keys(fs.shared)) {
		if se := fs.shared[key]; se.count > 0 {
			if err := b.add(se.claim.set, se.claim.element()); err != nil {
				return err
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(fs.contests)) {
		if w := fs.contests[key].winner; w != nil {
			if err := w.elements(b.add); err != nil {
				return err
			}
		}
	}
	return b.flushAll()
}

// batcher gathers elements set by set and emits an AddElements operation
// for each streamBatch of a set.
type batcher struct {
	t    *nft.Table
	emit func([]nft.Op) error
	bufs map[string][]nft.Element
}

func (b *batcher) add(set string, e nft.Element) error {
	buf := b.bufs[set]
	if buf == nil {
		buf = make([]nft.Element, 0, streamBatch)
	}
	buf = append(buf, e)
	if len(buf) < streamBatch {
		b.bufs[set] = buf
		return nil
	}
	b.bufs[set] = nil
	return b.flush(set, buf)
}

func (b *batcher) flush(set string, elems []nft.Element) error {
	return b.emit([]nft.Op{{Kind: nft.AddElements, Family: b.t.Family, Name: set, Set: b.t.Set(set), Elements: elems}})
}

// flushAll emits what is left, in the table's order of sets.
func (b *batcher) flushAll() error {
	for _, s := range b.t.Sets {
		if buf := b.bufs[s.Name]; len(buf) > 0 {
			if err := b.flush(s.Name, buf); err != nil {
				return err
			}
		}
	}
	return nil
}
