package compile

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Problem is an object, or a field of one, the compiler could not program
// as asked: the part named by Field is left out or ignored, and everything
// else is still compiled.
type Problem struct {
	Object string // "Service default/web"
	Field  string // "spec.ports[0].nodePort"
	Detail string
}

func (p Problem) Error() string {
	return fmt.Sprintf("%s: %s: %s", p.Object, p.Field, p.Detail)
}

// nodeInfo is what the compiler needs from the Node.
type nodeInfo struct {
	name string
	ips  []netip.Addr
	zone string // the node's topology.kubernetes.io/zone label, for topology hints
}

// isPrimary reports whether a is the node's first address of its family.
func (n nodeInfo) isPrimary(a netip.Addr) bool {
	for _, ip := range n.ips {
		if nft.FamilyOf(ip) == nft.FamilyOf(a) {
			return ip == a
		}
	}
	return false
}

// Ruleset returns the tables nftproxy programs for snap on node. A table is
// produced for each family that the node or any Service uses. Objects that
// cannot be programmed are reported as Problems and left out.
//
// Ruleset is the from-scratch case of Tables: the tables it returns are
// exactly those a Tables value converges to through any sequence of updates.
func Ruleset(snap *model.Snapshot, node model.Node, o Options) (nft.Ruleset, []Problem) {
	c := New(snap, node, o)
	return c.Ruleset(), c.Problems()
}

func indexSlices(slices []model.EndpointSlice) map[string][]*model.EndpointSlice {
	idx := map[string][]*model.EndpointSlice{}
	for i := range slices {
		s := &slices[i]
		key := s.Namespace + "/" + s.Service
		idx[key] = append(idx[key], s)
	}
	return idx
}

func dedupeProblems(ps []Problem) []Problem {
	seen := map[Problem]bool{}
	var out []Problem
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// compiler compiles one Service at a time (see compileService): the unit
// of work that incremental syncs repeat for changed Services only.
type compiler struct {
	opts   Options
	node   nodeInfo
	slices map[string][]*model.EndpointSlice
	// key and object name the Service being compiled ("namespace/name",
	// "Service namespace/name"), made once rather than for every claim.
	key, object string
	// problems of the Service being compiled, in the order found.
	problems []unitProblem
}

// unitProblem is a Problem of one Service; a claim conflict (claim >= 0)
// is only a problem if the Service loses that claim, which depends on the
// other Services and is settled when the table is assembled.
type unitProblem struct {
	Problem
	family nft.Family
	claim  int // index into the family's builder.claims, -1 for none
}

// compileService compiles svc in every family into a unit. The unit
// depends only on svc, its EndpointSlices, the node and Options, never on
// other Services: conflicts between Services are settled later, by claims.
func (c *compiler) compileService(svc *model.Service) *unit {
	c.problems = nil
	c.key = svc.Key()
	c.object = "Service " + c.key
	u := &unit{key: c.key}
	for i, f := range nft.Families {
		b := newBuilder(f)
		c.service(b, svc)
		u.families[i] = b.trim(i)
		u.uses[i] = len(addrsOf(svc.ClusterIPs, f)) > 0
	}
	u.problems = slices.Clone(c.problems) // exact size: units live long
	u.in = inputOf(svc, c.slices[c.key])
	return u
}

func (c *compiler) problem(svc *model.Service, field, detail string) {
	c.problems = append(c.problems, unitProblem{
		Problem: Problem{Object: c.object, Field: field, Detail: detail}, claim: -1})
}

// sortProblems orders problems by object, keeping each object's problems in
// the order they were found, and drops repeats (a problem found in both
// families).
func sortProblems(ps []Problem) []Problem {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Object < ps[j].Object })
	return dedupeProblems(ps)
}
