package nft

import (
	"fmt"
	"net/netip"
	"sort"

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
}

// isPrimary reports whether a is the node's first address of its family.
func (n nodeInfo) isPrimary(a netip.Addr) bool {
	for _, ip := range n.ips {
		if FamilyOf(ip) == FamilyOf(a) {
			return ip == a
		}
	}
	return false
}

// Compile returns the tables nftproxy programs for snap on node. A table is
// produced for each family that the node or any Service uses. Objects that
// cannot be programmed are reported as Problems and left out.
func Compile(snap *model.Snapshot, node model.Node, o Options) (Ruleset, []Problem) {
	c := &compiler{
		opts:   o,
		node:   nodeInfo{name: node.Name, ips: node.IPs},
		slices: indexSlices(snap.Slices),
	}
	rs := Ruleset{}
	for _, f := range Families {
		if !usesFamily(snap, node, f) {
			continue
		}
		rs[f] = c.table(f, snap)
	}
	sort.SliceStable(c.problems, func(i, j int) bool { return c.problems[i].Object < c.problems[j].Object })
	return rs, dedupeProblems(c.problems)
}

func usesFamily(snap *model.Snapshot, node model.Node, f Family) bool {
	for _, ip := range node.IPs {
		if FamilyOf(ip) == f {
			return true
		}
	}
	for i := range snap.Services {
		for _, ip := range snap.Services[i].ClusterIPs {
			if FamilyOf(ip) == f {
				return true
			}
		}
	}
	return false
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

type compiler struct {
	opts     Options
	node     nodeInfo
	slices   map[string][]*model.EndpointSlice
	problems []Problem
}

// builder accumulates one family's table while Services are compiled.
type builder struct {
	family Family
	table  *Table
	sets   map[string]*Set
	owners map[string]string // set name + element key -> owning Service
	chains []*Chain          // per-Service chains, sorted at the end
}

func (c *compiler) table(f Family, snap *model.Snapshot) *Table {
	b := newBuilder(f, c.opts)
	for _, ip := range c.opts.nodePortIPs(c.node, f) {
		b.addElement(setNodePortIPs, "", Element{Key: []Value{{Addr: ip}}})
	}
	for i := range snap.Services {
		c.service(b, &snap.Services[i])
	}
	return b.finish()
}

func newBuilder(f Family, o Options) *builder {
	t := &Table{Family: f, Name: TableName}
	b := &builder{family: f, table: t, sets: map[string]*Set{}, owners: map[string]string{}}
	for _, spec := range sets {
		s := &Set{Name: spec.name, Key: spec.key(f), Map: spec.isMap, Comment: spec.comment}
		t.Sets = append(t.Sets, s)
		b.sets[s.Name] = s
	}
	for _, bc := range baseChains {
		base := bc.base
		ch := &Chain{Name: bc.name, Base: &base}
		for _, stmts := range bc.rules {
			ch.Rules = append(ch.Rules, Rule{Stmts: stmts})
		}
		t.Chains = append(t.Chains, ch)
	}
	t.Chains = append(t.Chains, fixedChains(f, o)...)
	if !o.MasqueradeAll && len(o.localCIDRs(f)) > 0 {
		t.Chains = append(t.Chains, nonClusterChain(f, o))
	}
	return b
}

// addElement adds e to the named set unless another Service already owns
// that key; it reports whether e was added. owner "" means no owner is
// tracked (fixed content such as node IPs) and duplicates are ignored.
func (b *builder) addElement(set, owner string, e Element) (ok bool, other string) {
	s := b.sets[set]
	key := keySpace(set) + " " + s.KeyText(e.Key)
	if prev, dup := b.owners[key]; dup {
		return prev == owner, prev
	}
	b.owners[key] = owner
	s.Elements = append(s.Elements, e)
	return true, ""
}

// keySpace names the address space a set's keys live in: a Service IP and
// port is claimed once whether it has endpoints (service-ips) or not
// (no-endpoint-services), and likewise a NodePort.
func keySpace(set string) string {
	switch set {
	case mapServiceIPs, mapNoEndpointServices:
		return "service-ip"
	case mapServiceNodePorts, mapNoEndpointNodePorts:
		return "nodeport"
	}
	return set
}

func (b *builder) finish() *Table {
	sort.Slice(b.chains, func(i, j int) bool { return b.chains[i].Name < b.chains[j].Name })
	b.table.Chains = append(b.table.Chains, b.chains...)
	for _, s := range b.table.Sets {
		s.SortElements()
	}
	return b.table
}
