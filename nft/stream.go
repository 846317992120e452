package nft

import "slices"

// Stream is a plan that is produced rather than held: the operations of one
// transaction, emitted in order a few at a time by Each. A first sync of a
// large cluster is a plan of hundreds of thousands of elements (120,000 at
// 10,000 Services x 10 endpoints, 64 bytes per key part); an applier that
// encodes a Stream as it comes never holds them all, which halves the peak
// memory of that sync (docs/benchmarks.md).
type Stream struct {
	// Gen and Full mean what they mean in a Plan.
	Gen  uint32
	Full bool
	// Each calls emit with the operations, in order, and returns emit's
	// first error. An applier may call it more than once (to retry a
	// batch); each call emits the same operations. emit must not keep the
	// elements of what it is given: a producer may reuse their memory for
	// the next operations once emit returns (Plan copies them).
	Each func(emit func(ops []Op) error) error
}

// Plan collects the operations of s into a Plan.
func (s *Stream) Plan() (*Plan, error) {
	p := &Plan{Gen: s.Gen, Full: s.Full}
	err := s.Each(func(ops []Op) error {
		for _, op := range ops {
			op.Elements = cloneElements(op.Elements)
			p.Ops = append(p.Ops, op)
		}
		return nil
	})
	return p, err
}

// cloneElements copies elements and their keys and data.
func cloneElements(elems []Element) []Element {
	if elems == nil {
		return nil
	}
	out := make([]Element, len(elems))
	for i, e := range elems {
		out[i] = e
		out[i].Key, out[i].Data = slices.Clone(e.Key), slices.Clone(e.Data)
	}
	return out
}

// StreamApplier commits a Stream as one transaction, all of its operations
// or none, as an Applier commits a Plan. It returns the number of
// operations committed. The Fake is not one: a test that wraps its Apply
// sees every transaction; Stream.Plan turns a stream into a plan for it.
type StreamApplier interface {
	ApplyStream(s *Stream) (int, error)
}

// ReplaceTableOps returns the operations of a plan that replaces our table
// of t's family with t, as Diff does on unknown state, in two parts: head
// deletes whatever table is there and adds t's table, sets, chains and the
// elements t holds; rules adds t's rules. A Stream adds more elements
// between the two.
func ReplaceTableOps(t *Table) (head, rules []Op) {
	ops := replaceTable(t)
	i := len(ops)
	for i > 0 && ops[i-1].Kind == AddRule {
		i--
	}
	return ops[:i:i], ops[i:]
}

// DeleteTableOps returns the operations that delete our table of family f
// whether or not it exists, as Diff does on unknown state for a family
// nobody uses.
func DeleteTableOps(f Family) []Op { return deleteTable(f) }
