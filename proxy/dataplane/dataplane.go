package dataplane

import (
	"fmt"
	"sync"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Kernel is what the Dataplane needs from nftables: nft/kernel.Kernel in
// production, nft.Fake in unit tests.
type Kernel interface {
	nft.Applier
	nft.Reader
	// Generation returns the ruleset generation, which every committed
	// transaction moves, ours or anyone else's.
	Generation() (uint32, error)
}

// Input is what one Sync programs.
type Input struct {
	Snapshot *model.Snapshot
	Node     model.Node
	Options  nft.Options
	// Changed: Services ("namespace/name") whose Service or EndpointSlices
	// changed since the previous successful Sync. The Dataplane falls back
	// to a full sync when it must (first sync, previous failure, external
	// change, Options or Node changed).
	Changed map[string]bool
	// Full forces a full reconcile against the kernel (the periodic resync).
	Full bool
}

// Result is what one Sync did.
type Result struct {
	Full     bool          // whole tables replaced
	Ops      int           // operations in the transaction (0: nothing to do)
	Bytes    int           // netlink bytes sent, when known
	Repaired bool          // kernel differed from what we committed; restored
	Problems []nft.Problem // objects (or fields) left out, for Events
}

// Dataplane programs one network namespace. Its methods are safe for
// concurrent use; Syncs are serialized.
type Dataplane struct {
	k  Kernel
	mu sync.Mutex
	// mirror is what we last committed; nil when unknown (start, failure).
	mirror nft.Ruleset
	// gen is the generation at which the kernel held exactly mirror.
	gen uint32
}

// New returns a Dataplane that programs k. It knows nothing of the kernel's
// state yet: the first Sync replaces our tables whole.
func New(k Kernel) *Dataplane { return &Dataplane{k: k} }

// Sync programs in.Snapshot as one transaction, or changes nothing when it
// returns an error. Problems are reported in both cases.
func (d *Dataplane) Sync(in Input) (Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	desired, problems := nft.Compile(in.Snapshot, in.Node, in.Options)
	res := Result{Problems: problems}
	committed, gen, err := d.committed(in.Full, &res)
	if err != nil {
		d.mirror = nil
		return res, err
	}
	plan := nft.Diff(committed, desired)
	if err := d.apply(plan, gen, &res); err != nil {
		d.mirror = nil
		return res, err
	}
	d.mirror = desired
	return res, nil
}

// committed returns what the kernel holds, as far as a diff needs it, and
// the generation that state belongs to: the mirror when nothing else has
// committed since our last transaction, else the kernel's tables read back.
// nil means unknown: the plan will replace our tables whole.
func (d *Dataplane) committed(full bool, res *Result) (nft.Ruleset, uint32, error) {
	gen, err := d.k.Generation()
	if err != nil {
		return nil, 0, fmt.Errorf("sync: %w", err)
	}
	if d.mirror == nil || (!full && gen == d.gen) {
		return d.mirror, gen, nil
	}
	read, err := d.k.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("sync: %w", err)
	}
	res.Repaired = !nft.Diff(d.mirror, read).Empty()
	return read, gen, nil
}

// apply commits plan, planned against generation gen, and records the
// generation our commit produced.
func (d *Dataplane) apply(plan *nft.Plan, gen uint32, res *Result) error {
	res.Full, res.Ops = plan.Full, len(plan.Ops)
	if plan.Empty() {
		d.gen = gen
		return nil
	}
	if err := d.k.Apply(plan); err != nil {
		return fmt.Errorf("sync (%d ops): %w", len(plan.Ops), err)
	}
	// Our commit is the one after gen. If somebody else committed just
	// before us, the kernel is past gen+1: the next check sees a generation
	// that is not ours and reads the kernel back, which such a race needs.
	d.gen = gen + 1
	return nil
}
