package dataplane

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
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

// byteCounter is implemented by a Kernel that knows how many netlink bytes
// its last Apply sent.
type byteCounter interface{ LastBatchBytes() int }

// Input is what one Sync programs.
type Input struct {
	Snapshot *model.Snapshot
	Node     model.Node
	Options  compile.Options
	// Changed: Services ("namespace/name") whose Service or EndpointSlices
	// changed since the previous successful Sync. The Dataplane falls back
	// to a full sync when it must (first sync, previous failure, external
	// change, Options or Node changed). nil means unknown: everything is
	// recompiled; an empty map means nothing changed.
	Changed map[string]bool
	// Full forces a full reconcile (the periodic resync): everything is
	// recompiled and diffed against what the kernel holds. The tables are
	// read back when the ruleset generation says somebody else committed;
	// otherwise the mirror is what the kernel holds.
	Full bool
}

// Result is what one Sync did.
type Result struct {
	Full     bool              // whole tables replaced
	Ops      int               // operations in the transaction (0: nothing to do)
	Bytes    int               // netlink bytes sent, when known
	Repaired bool              // kernel differed from what we committed; restored
	Problems []compile.Problem // objects (or fields) left out, for Events
	// ReadBack: our tables were read back whole, as announcements of
	// others' transactions were lost or are not followed (see Watch).
	ReadBack bool
	// Families are the families whose tables the sync programs, with what
	// metrics report about them; also when the sync failed after planning.
	Families []compile.FamilyStatus
	// Replanned counts the plans the kernel refused because somebody else
	// committed between our reading of the ruleset generation and our
	// commit; each time the tables were read back and planned again.
	Replanned int
}

// Dataplane programs one network namespace. Its methods are safe for
// concurrent use; Syncs are serialized.
type Dataplane struct {
	k  Kernel
	mu sync.Mutex
	// compiled is the desired state of the last Sync; nil before the first.
	compiled *compile.Tables
	node     model.Node
	opts     compile.Options
	// known is true when the kernel held exactly compiled's tables at
	// generation gen, but for drift: the mirror of what we committed. A
	// failure clears it.
	known bool
	gen   uint32
	// drift is what others' transactions announced up to gen changed in
	// our tables; lost is true when some may have gone unannounced, and
	// the tables must be read back (watch.go).
	drift drift
	lost  bool
	// inbox holds the announcements while Watch follows them.
	inbox *inbox
}

// New returns a Dataplane that programs k. It knows nothing of the kernel's
// state yet: the first Sync replaces our tables whole.
func New(k Kernel) *Dataplane { return &Dataplane{k: k, drift: drift{}} }

// maxReplans bounds the plans one Sync makes again after the kernel refused
// one because somebody else committed in between: under a stream of foreign
// commits faster than our planning, the Sync fails instead (and the runner
// retries it with backoff) rather than read the tables back forever.
const maxReplans = 3

// Sync programs in.Snapshot as one transaction, or changes nothing in the
// kernel when it returns an error.
func (d *Dataplane) Sync(in Input) (Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	res, plan, err := d.sync(in)
	for nft.IsConflict(err) && res.Replanned < maxReplans {
		res, plan, err = d.replan(res, plan)
	}
	if err != nil {
		d.known = false
	}
	return res, err
}

// sync plans from the ruleset generation it reads first, and commits the
// plan only if the kernel is still at that generation (see nft.Plan.Gen).
// It returns the plan it made, for replan.
func (d *Dataplane) sync(in Input) (Result, *nft.Plan, error) {
	var res Result
	gen, err := d.k.Generation()
	if err != nil {
		return res, nil, fmt.Errorf("sync: %w", err)
	}
	var read nft.Ruleset
	if d.known {
		// Somebody else may have committed since our last transaction.
		// Their announcements tell what they changed in our tables, which
		// is repaired first; when they do not tell, trust the kernel, not
		// the mirror, and read the tables back (seconds at 10,000
		// Services).
		if gen, err = d.settle(gen, &res); err != nil {
			return res, nil, fmt.Errorf("sync: %w", err)
		}
		if d.lost {
			res.ReadBack = true
			if read, err = d.k.Read(); err != nil {
				return res, nil, fmt.Errorf("sync: %w", err)
			}
		}
	}
	if s := d.stream(in); s != nil {
		s.Gen = gen
		res.Problems, res.Families = d.compiled.Problems(), d.compiled.Status()
		// A refused stream replaced tables we did not know: replan sees
		// a Full plan.
		return res, &nft.Plan{Gen: gen, Full: true}, d.commitStream(&res, s)
	}
	// Tables read back are compared with the mirror once, whole: that
	// plan restores the mirror (Repaired when it is not empty), and the
	// plan of the sync proper follows it in the same transaction, made as
	// if the kernel held the mirror. A second comparison of whole tables,
	// from the kernel to the updated mirror, would cost another pair of
	// tables' worth of memory and CPU at 10,000 Services.
	var restore *nft.Plan
	if read != nil {
		restore = nft.Diff(read, d.compiled.Ruleset())
		res.Repaired = res.Repaired || !restore.Empty()
	}
	plan := d.plan(in)
	if restore != nil {
		restore.Append(plan.Ops)
		restore.Full = restore.Full || plan.Full
		plan = restore
	}
	plan.Gen = gen
	res.Problems, res.Families = d.compiled.Problems(), d.compiled.Status()
	return res, plan, d.commit(&res, plan, read != nil)
}

// settle brings what the Dataplane knows of the kernel up to generation
// gen (catchUp) and repairs, in a transaction of its own, what others'
// transactions changed in our tables up to then. It returns the
// generation to plan from; with d.lost set, the caller reads the tables
// back instead.
func (d *Dataplane) settle(gen uint32, res *Result) (uint32, error) {
	d.catchUp(gen)
	if d.lost {
		return gen, nil
	}
	if !d.drift.empty() {
		n, err := d.repairDrift()
		if err != nil {
			return 0, err
		}
		res.Repaired = res.Repaired || n > 0
		if d.lost {
			return d.k.Generation()
		}
	}
	return d.gen, nil
}

// replan follows a plan the kernel refused because the ruleset moved on
// after the generation it was made from. The mirror already holds the
// desired tables (the refused plan was made by bringing it there), so the
// new plan goes from the tables as they are now, read back, to the
// mirror's: whatever the other commit did to them is undone, nothing it
// did elsewhere is touched, and our own change is in the plan again.
func (d *Dataplane) replan(prev Result, refused *nft.Plan) (Result, *nft.Plan, error) {
	res := Result{Repaired: prev.Repaired, Problems: prev.Problems, Families: prev.Families, Replanned: prev.Replanned + 1}
	gen, err := d.k.Generation()
	if err != nil {
		return res, nil, fmt.Errorf("sync: %w", err)
	}
	read, err := d.k.Read()
	if err != nil {
		return res, nil, fmt.Errorf("sync: %w", err)
	}
	plan := nft.Diff(read, d.compiled.Ruleset())
	plan.Gen = gen
	// The other commit changed our tables when the plan from them is not
	// the one refused. A refused full plan replaced tables we did not know,
	// so nothing of ours was there to repair.
	res.Repaired = res.Repaired || (!refused.Full && !sameOps(refused, plan))
	return res, plan, d.commit(&res, plan, true)
}

// commit applies plan and records it in res and in the mirror's state. A
// plan from tables read back, or one that replaces them, leaves nothing
// of others' changes unrepaired.
func (d *Dataplane) commit(res *Result, plan *nft.Plan, fromRead bool) error {
	res.Full, res.Ops = plan.Full, len(plan.Ops)
	if err := d.apply(plan); err != nil {
		return err
	}
	if !plan.Empty() {
		res.Bytes = d.sentBytes()
	}
	if fromRead || plan.Full || !d.known {
		d.lost, d.drift = false, drift{}
	}
	d.known = true
	return nil
}

// stream compiles in from scratch and returns the stream that replaces our
// tables with it, when the kernel's state is unknown (the first Sync, or
// one after a failure) and the kernel takes streams; nil otherwise. A
// stream is encoded as it is made: the whole table's elements never exist
// at once, which is most of a first sync's peak memory (nft.Stream).
func (d *Dataplane) stream(in Input) *nft.Stream {
	if _, ok := d.k.(nft.StreamApplier); !ok || d.known {
		return nil
	}
	d.compiled = nil // the old state can go before the new is built
	d.compiled = compile.New(in.Snapshot, in.Node, in.Options)
	d.node, d.opts = in.Node, in.Options
	return d.compiled.Stream()
}

// commitStream applies s and records it in res and in the mirror's state,
// as commit does for a plan.
func (d *Dataplane) commitStream(res *Result, s *nft.Stream) error {
	n, err := d.k.(nft.StreamApplier).ApplyStream(s)
	res.Full, res.Ops = true, n
	if err != nil {
		return fmt.Errorf("sync (%d ops): %w", n, err)
	}
	d.gen = nft.NextGeneration(s.Gen) // as apply does for a plan
	res.Bytes = d.sentBytes()
	// The stream replaced our tables whole: nothing of others' changes is
	// left unrepaired.
	d.lost, d.drift = false, drift{}
	d.known = true
	return nil
}

// sameOps reports whether two plans hold the same operations, in any
// order.
func sameOps(a, b *nft.Plan) bool {
	if len(a.Ops) != len(b.Ops) {
		return false
	}
	texts := func(p *nft.Plan) []string {
		out := make([]string, len(p.Ops))
		for i, op := range p.Ops {
			out[i] = op.String()
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(texts(a), texts(b))
}

// plan updates the desired state to in and returns the plan from the
// mirror, or from nothing known (a plan that replaces our tables whole).
func (d *Dataplane) plan(in Input) *nft.Plan {
	if d.mustRecompile(in) {
		return d.recompile(in)
	}
	changed := in.Changed
	if changed == nil || in.Full {
		// Every Service is looked at, as a change may have been missed,
		// one at a time against the units we hold: only those that differ
		// are updated (see compile.Tables.Stale), with those reported.
		stale := d.compiled.Stale(in.Snapshot)
		maps.Copy(stale, in.Changed)
		changed = stale
	}
	return d.compiled.Update(in.Snapshot, changed)
}

// recompile compiles in from scratch and returns the plan from the mirror
// while it is known, or from nothing known.
func (d *Dataplane) recompile(in Input) *nft.Plan {
	var from nft.Ruleset
	if d.known {
		from = d.compiled.Ruleset()
	}
	// What from needs of the old state it holds; the rest can go before
	// the new state is built (two compiled clusters at once are the peak).
	d.compiled = nil
	d.compiled = compile.New(in.Snapshot, in.Node, in.Options)
	d.node, d.opts = in.Node, in.Options
	return nft.Diff(from, d.compiled.Ruleset())
}

// mustRecompile reports whether in needs a compilation from scratch rather
// than an update of the Services that changed or are stale: the first
// Sync, after a failure, or when the Node or Options changed.
func (d *Dataplane) mustRecompile(in Input) bool {
	return d.compiled == nil || !d.known ||
		!reflect.DeepEqual(in.Node, d.node) || !reflect.DeepEqual(in.Options, d.opts)
}

// apply commits plan, made from generation plan.Gen, and records the
// generation our commit produced.
func (d *Dataplane) apply(plan *nft.Plan) error {
	if plan.Empty() {
		d.gen = plan.Gen
		return nil
	}
	if err := d.k.Apply(plan); err != nil {
		return fmt.Errorf("sync (%d ops): %w", len(plan.Ops), err)
	}
	// The kernel commits the plan only at plan.Gen, so ours is exactly the
	// commit after it. A commit by somebody else right after ours moves the
	// generation again: Watch and the next Sync see a generation that is
	// not ours and read the tables back.
	d.gen = nft.NextGeneration(plan.Gen)
	return nil
}

// sentBytes returns what the last Apply sent, when the Kernel counts it.
func (d *Dataplane) sentBytes() int {
	if bc, ok := d.k.(byteCounter); ok {
		return bc.LastBatchBytes()
	}
	return 0
}
