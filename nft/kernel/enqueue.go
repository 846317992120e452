package kernel

import (
	"errors"
	"fmt"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

func tableOf(f nft.Family) *nftables.Table {
	fam := nftables.TableFamilyIPv4
	if f == nft.IPv6 {
		fam = nftables.TableFamilyIPv6
	}
	return &nftables.Table{Name: nft.TableName, Family: fam}
}

// enqueue buffers operations of a plan, the first of them at position
// first in the plan, on the connection. Long runs of rules are encoded in
// parallel (enqueue_rules.go).
func (k *Kernel) enqueue(ops []nft.Op, first int) error {
	for i := 0; i < len(ops); i++ {
		if n := ruleRun(ops[i:]); n >= parallelRules {
			if err := k.addRules(ops[i:i+n], first+i); err != nil {
				return err
			}
			i += n - 1
			continue
		}
		if err := k.enqueueOp(ops[i]); err != nil {
			return &nft.OpError{Index: first + i, Op: ops[i], Err: err}
		}
	}
	return nil
}

func (k *Kernel) enqueueOp(op nft.Op) error {
	t := tableOf(op.Family)
	switch op.Kind {
	case nft.AddTable:
		k.batch.AddTable(t)
	case nft.DeleteTable:
		k.batch.DelTable(t)
	case nft.AddSet:
		return k.addSet(op.Family, t, op.Set)
	case nft.DeleteSet:
		k.batch.DelSet(&nftables.Set{Table: t, Name: op.Name})
	case nft.AddCounter:
		k.batch.AddObj(&nftables.CounterObj{Table: t, Name: op.Counter.Name})
	case nft.AddChain:
		k.batch.AddChain(newChain(t, op.Chain))
	case nft.FlushChain:
		k.batch.FlushChain(&nftables.Chain{Table: t, Name: op.Name})
	case nft.DeleteChain:
		k.batch.DelChain(&nftables.Chain{Table: t, Name: op.Name})
	case nft.AddRule:
		return k.addRule(op)
	case nft.AddElements:
		return k.addElements(newSetElemType, op)
	case nft.DeleteElements:
		return k.addElements(delSetElemType, op)
	default:
		return fmt.Errorf("unknown operation %v", op.Kind)
	}
	return nil
}

// addElements writes an element operation into the batch (element_msg.go),
// but for a range set's, which google/nftables marshals.
func (k *Kernel) addElements(typ uint16, op nft.Op) error {
	if isRangeSet(op.Set) {
		set, elems := newSet(tableOf(op.Family), op.Set), encodeElements(op.Set, op.Elements)
		if typ == delSetElemType {
			return k.batch.SetDeleteElements(set, elems)
		}
		return k.batch.SetAddElements(set, elems)
	}
	if err := k.drain(); err != nil { // what google/nftables holds goes first: plan order
		return err
	}
	k.out.elements(typ, op.Family, op.Set, op.Elements)
	return nil
}

func (k *Kernel) addRule(op nft.Op) error {
	if err := k.drain(); err != nil { // what google/nftables holds goes first: plan order
		return err
	}
	return k.out.rule(op.Family, op.Name, *op.Rule)
}

// poisonName is a flowtable that never exists: deleting it fails with a
// message type our plans never use, which marks the end of a probe batch.
const poisonName = "nftproxy-probe-never-exists"

// prefixFails reports whether ops fail before the poison operation at their
// end. Either way the batch aborts and nothing is committed.
func (k *Kernel) prefixFails(ops []nft.Op) (bool, error) {
	if err := k.enqueue(ops, 0); err != nil {
		k.discard()
		return true, nil
	}
	k.batch.DelFlowtable(&nftables.Flowtable{Table: tableOf(nft.IPv4), Name: poisonName})
	failed, n, err := k.flushBatch(0)
	if err == nil {
		return false, errors.New("probe batch committed: the poison operation did not fail")
	}
	return failed >= 0 && failed < n-1, nil
}
