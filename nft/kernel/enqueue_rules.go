package kernel

import (
	"runtime"
	"sync"

	"github.com/nftproxy/nftproxy/nft"
)

// parallelRules is the shortest run of consecutive rule additions worth
// encoding on several cores: a first sync has one run of every rule of the
// table (320,000 at 50,000 Services), where encoding is a quarter of our
// CPU time; a partial sync has short runs, one chain each.
const parallelRules = 4096

// ruleRun counts the AddRule operations at the start of ops.
func ruleRun(ops []nft.Op) int {
	n := 0
	for n < len(ops) && ops[n].Kind == nft.AddRule {
		n++
	}
	return n
}

// addRules encodes a run of AddRule operations, which start at position
// first of the plan, in parallel into one writer per core, and appends the
// writers to the batch in plan order.
func (k *Kernel) addRules(ops []nft.Op, first int) error {
	if err := k.drain(); err != nil { // what google/nftables holds goes first: plan order
		return err
	}
	parts := min(runtime.GOMAXPROCS(0), len(ops)/parallelRules+1)
	writers := make([]batchWriter, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(ops)/parts, (p+1)*len(ops)/parts
		wg.Go(func() { errs[p] = writers[p].rules(ops[lo:hi], first+lo) })
	}
	wg.Wait()
	for p := range parts {
		if errs[p] != nil {
			return errs[p]
		}
		k.out.appendWriter(&writers[p])
	}
	return nil
}

// rules encodes AddRule operations; first is the position of ops[0] in
// the plan, for errors.
func (w *batchWriter) rules(ops []nft.Op, first int) error {
	for i, op := range ops {
		if err := w.rule(op.Family, op.Name, *op.Rule); err != nil {
			return &nft.OpError{Index: first + i, Op: op, Err: err}
		}
	}
	return nil
}
