package compile

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Tables is a compiled ruleset kept Service by Service, so that a sync
// after a change recompiles and diffs only the Services that changed (see
// Update). It is pure like Ruleset: no clock, no I/O.
//
// Tables describes the desired state only; whether the kernel holds it
// is the caller's business (see proxy/dataplane).
type Tables struct {
	opts  Options
	node  nodeInfo
	units map[string]*unit
	order order
	fams  [2]*familyState
	// troubled holds the units that have problems of their own; a unit
	// with a claim conflict is found through the contested keys.
	troubled map[string]*unit
}

// familyState is what all units add up to in one family: who claims each
// exclusive key and who wins it, and how many units add each shared element.
type familyState struct {
	family   nft.Family
	nodeUses bool // the node has an address of this family
	services int  // Services with a ClusterIP of this family
	contests map[string]*contest
	shared   map[string]*sharedElement
	// contested holds the keys with more than one claimant, which are
	// settled again on every update.
	contested map[string]bool
	// rungs counts the lengths of the winners' endpoint lists.
	rungs rungs
	// cidrs are the elements of service-cidrs (servicecidr.go).
	cidrs []nft.Element
	// noLocal adds up the units' builder.noLocal.
	noLocal [2]int
}

type contest struct {
	claims []*claim
	winner *claim // nil when nobody claims the key
}

// sharedElement points at one of the claims that add it (the first, or a
// copy once that claim's unit is gone) rather than copying the element:
// at 10,000 Services there are as many shared elements as ClusterIPs.
type sharedElement struct {
	claim *claim
	count int
}

// New compiles every Service of snap.
func New(snap *model.Snapshot, node model.Node, o Options) *Tables {
	c := &Tables{
		opts:     o,
		node:     nodeInfo{name: node.Name, ips: node.IPs, zone: node.Labels[zoneLabel]},
		units:    make(map[string]*unit, len(snap.Services)),
		order:    orderOf(snap),
		troubled: map[string]*unit{},
	}
	for i, f := range nft.Families {
		c.fams[i] = newFamilyState(f, node)
		c.fams[i].cidrs = serviceCIDRs(snap.ServiceCIDRs, f)
	}
	comp := &compiler{opts: o, node: c.node, slices: indexSlices(snap.Slices)}
	for i := range snap.Services {
		key := snap.Services[i].Key()
		if c.units[key] != nil {
			continue // a duplicate: the first one counts
		}
		u := comp.compileService(&snap.Services[i])
		c.setUnit(key, u)
		for fi, fs := range c.fams {
			fs.add(u, fi)
		}
	}
	for _, fs := range c.fams {
		for _, ct := range fs.contests {
			ct.settle(&c.order)
			fs.rungs.add(ct.winner, 1)
		}
	}
	return c
}

func newFamilyState(f nft.Family, node model.Node) *familyState {
	fs := &familyState{family: f, contests: map[string]*contest{}, shared: map[string]*sharedElement{},
		contested: map[string]bool{}, rungs: newRungs()}
	for _, ip := range node.IPs {
		fs.nodeUses = fs.nodeUses || nft.FamilyOf(ip) == f
	}
	return fs
}

func (c *Tables) setUnit(key string, u *unit) {
	delete(c.troubled, key)
	if u == nil {
		delete(c.units, key)
		return
	}
	c.units[key] = u
	for _, p := range u.problems {
		if p.claim < 0 {
			c.troubled[key] = u
			break
		}
	}
}

func (fs *familyState) used() bool { return fs.nodeUses || fs.services > 0 }

// add records what u adds to the family, without settling contests.
func (fs *familyState) add(u *unit, fi int) {
	fs.count(u, fi, 1)
	u.families[fi].eachClaim(fs.addShared, fs.join)
}

// remove takes back what u added; contests are settled by the caller.
func (fs *familyState) remove(u *unit, fi int) {
	fs.count(u, fi, -1)
	u.families[fi].eachClaim(fs.removeShared, fs.leave)
}

// count adds sign (1 or -1) times u's share of the family's counts: its
// Service, when it has an address of the family, and its ports with no
// local endpoints.
func (fs *familyState) count(u *unit, fi, sign int) {
	if u.uses[fi] {
		fs.services += sign
	}
	fs.noLocal[0] += sign * u.families[fi].noLocal[0]
	fs.noLocal[1] += sign * u.families[fi].noLocal[1]
}

// join enters the owned claim cl in the contest for its key.
func (fs *familyState) join(cl *claim) {
	ct := fs.contests[cl.key]
	if ct == nil {
		ct = &contest{}
		fs.contests[cl.key] = ct
	}
	ct.claims = append(ct.claims, cl)
	if len(ct.claims) > 1 {
		fs.contested[cl.key] = true
	}
}

// leave takes the owned claim cl out of the contest for its key.
func (fs *familyState) leave(cl *claim) {
	ct := fs.contests[cl.key]
	ct.claims = slices.DeleteFunc(ct.claims, func(x *claim) bool { return x == cl })
	if len(ct.claims) < 2 {
		delete(fs.contested, cl.key)
	}
}

func (fs *familyState) addShared(cl *claim) {
	se := fs.shared[cl.key]
	if se == nil {
		se = &sharedElement{}
		fs.shared[cl.key] = se
	}
	if se.count == 0 {
		se.claim = cl // the previous claim's unit may be gone
	}
	se.count++
}

func (fs *familyState) removeShared(cl *claim) {
	se := fs.shared[cl.key]
	se.count--
	if se.claim == cl && se.count > 0 {
		kept := *cl // cl's unit is being replaced: do not keep it alive
		se.claim = &kept
	}
}

// settle gives the key to the claimant that comes first in the snapshot.
func (ct *contest) settle(order *order) {
	ct.winner = nil
	best := math.MaxInt
	for _, cl := range ct.claims {
		pos, ok := order.of(cl.owner)
		if !ok {
			pos = math.MaxInt - 1 // gone from the snapshot but not reported changed
		}
		if pos < best {
			best, ct.winner = pos, cl
		}
	}
}

// FamilyStatus is what one family's table holds, for metrics.
type FamilyStatus struct {
	Family nft.Family
	// NoLocalInternal and NoLocalExternal count the Service ports whose
	// internalTrafficPolicy, or externalTrafficPolicy, is Local and that
	// have endpoints, none of them on this node.
	NoLocalInternal, NoLocalExternal int
}

// Status returns the status of each family that has a table.
func (c *Tables) Status() []FamilyStatus {
	var out []FamilyStatus
	for _, fs := range c.fams {
		if fs.used() {
			out = append(out, FamilyStatus{Family: fs.family, NoLocalInternal: fs.noLocal[0], NoLocalExternal: fs.noLocal[1]})
		}
	}
	return out
}

// Problems returns the objects, or fields, left out, sorted by object.
func (c *Tables) Problems() []Problem {
	units := c.problemUnits()
	keys := make([]string, 0, len(units))
	for k := range units {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return c.position(keys[i]) < c.position(keys[j]) })
	var out []Problem
	for _, k := range keys {
		out = append(out, c.unitProblems(units[k])...)
	}
	return sortProblems(out)
}

// problemUnits returns the units that may have problems: those with
// problems of their own and those that claim a contested key.
func (c *Tables) problemUnits() map[string]*unit {
	out := make(map[string]*unit, len(c.troubled))
	for k, u := range c.troubled {
		out[k] = u
	}
	for _, fs := range c.fams {
		for key := range fs.contested {
			for _, cl := range fs.contests[key].claims {
				out[cl.owner] = c.units[cl.owner]
			}
		}
	}
	return out
}

func (c *Tables) position(key string) int {
	if pos, ok := c.order.of(key); ok {
		return pos
	}
	return math.MaxInt
}

// unitProblems returns u's problems, with the claims it lost.
func (c *Tables) unitProblems(u *unit) []Problem {
	var out []Problem
	for _, p := range u.problems {
		if p.claim < 0 {
			out = append(out, p.Problem)
			continue
		}
		fi := familyIndex(p.family)
		cl := &u.families[fi].claims[p.claim]
		w := c.fams[fi].contests[cl.key].winner
		if w == nil || w.owner == u.key {
			continue
		}
		p.Detail = fmt.Sprintf("%s is already used by Service %s", setDefs[fi][cl.set].KeyText(unpackKey(cl.set, cl.key)), w.owner)
		out = append(out, p.Problem)
	}
	return out
}
