package compile

import (
	"encoding/binary"
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
// (most of a first sync's peak memory). Elements come in the order of
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
	b := &batcher{t: t, emit: emit, sets: map[string]*setBatch{}}
	for _, key := range slices.Sorted(maps.Keys(fs.shared)) {
		if se := fs.shared[key]; se.count > 0 {
			if err := b.claim(se.claim); err != nil {
				return err
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(fs.contests)) {
		if w := fs.contests[key].winner; w != nil {
			if err := b.claim(w); err != nil {
				return err
			}
		}
	}
	return b.flushAll()
}

// batcher gathers elements set by set and emits an AddElements operation
// for each streamBatch of a set. The elements of a batch, and their keys
// and data, live in arrays of the set's that the next batch reuses (the
// Stream contract): a first sync at 10,000 x 10 allocates a few arrays,
// not 120,000 elements.
type batcher struct {
	t    *nft.Table
	emit func([]nft.Op) error
	sets map[string]*setBatch
}

// setBatch is one set's batch being filled.
type setBatch struct {
	set   *nft.Set
	elems []nft.Element
	vals  []nft.Value // the elements' keys and data
}

func (b *batcher) batch(set string) *setBatch {
	sb := b.sets[set]
	if sb == nil {
		s := b.t.Set(set)
		sb = &setBatch{set: s, elems: make([]nft.Element, 0, streamBatch),
			vals: make([]nft.Value, 0, streamBatch*(len(s.Key)+len(s.Data)))}
		b.sets[set] = sb
	}
	return sb
}

// claim adds the element cl asks for and the elements of its endpoint
// lists, as cl.elements makes them.
func (b *batcher) claim(cl *claim) error {
	sb := b.batch(cl.set)
	e := nft.Element{Key: sb.values(cl.key[len(keySpace(cl.set))+1:]), Verdict: cl.verdict, Data: sb.values(cl.data), Comment: cl.comment}
	if err := b.add(sb, e); err != nil || cl.lists == "" {
		return err
	}
	key := unpackKey(cl.set, cl.key)
	for s := cl.lists; len(s) > 0; {
		m, n := int(s[0]&^hashFlag), int(binary.BigEndian.Uint32([]byte(s[1:5])))
		rung := n
		if s[0]&hashFlag != 0 {
			rung = hashRung
		}
		lb := b.batch(listMapName(m, rung))
		s = s[5:]
		for i := range n {
			var addr, port nft.Value
			addr, s = unpackValue(s)
			port, s = unpackValue(s)
			start, k := len(lb.vals), len(key)+1
			lb.vals = append(append(lb.vals, key...), nft.Value{Num: uint32(i)}, addr, port)
			v := lb.vals[start:]
			if err := b.add(lb, nft.Element{Key: v[:k:k], Data: v[k : k+2 : k+2]}); err != nil {
				return err
			}
		}
	}
	return nil
}

// values appends the values packed in s to sb's array and returns them.
func (sb *setBatch) values(s string) []nft.Value {
	if s == "" {
		return nil
	}
	start := len(sb.vals)
	for len(s) > 0 {
		var v nft.Value
		v, s = unpackValue(s)
		sb.vals = append(sb.vals, v)
	}
	return sb.vals[start:len(sb.vals):len(sb.vals)]
}

// add adds e to sb, and emits sb when it is full.
func (b *batcher) add(sb *setBatch, e nft.Element) error {
	sb.elems = append(sb.elems, e)
	if len(sb.elems) < streamBatch {
		return nil
	}
	return b.flush(sb)
}

// flush emits sb's elements, then empties it for reuse.
func (b *batcher) flush(sb *setBatch) error {
	err := b.emit([]nft.Op{{Kind: nft.AddElements, Family: b.t.Family, Name: sb.set.Name, Set: sb.set, Elements: sb.elems}})
	sb.elems, sb.vals = sb.elems[:0], sb.vals[:0]
	return err
}

// flushAll emits what is left, in the table's order of sets.
func (b *batcher) flushAll() error {
	for _, s := range b.t.Sets {
		if sb := b.sets[s.Name]; sb != nil && len(sb.elems) > 0 {
			if err := b.flush(sb); err != nil {
				return err
			}
		}
	}
	return nil
}
