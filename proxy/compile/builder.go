package compile

import (
	"slices"

	"github.com/nftproxy/nftproxy/nft"
)

// unit is the compiled output of one Service: what it adds to each
// family's table. Units are immutable once built.
type unit struct {
	key      string
	families [2]*builder // indexed like Families
	uses     [2]bool     // the Service has a ClusterIP of that family
	problems []unitProblem
	// in is what the unit was compiled from, for Stale (input.go).
	in input
}

func familyIndex(f nft.Family) int {
	if f == nft.IPv6 {
		return 1
	}
	return 0
}

// builder accumulates what one Service adds to one family's table: its
// chains and the set and map elements it asks for.
type builder struct {
	family nft.Family
	sets   map[string]*nft.Set // definitions only (for KeyText); never hold elements
	chains []*nft.Chain
	claims []claim
	// noLocal counts the ports with endpoints but none on this node whose
	// internal (0) or external (1) traffic policy is Local: their traffic
	// of that kind is dropped here (for metrics).
	noLocal [2]int
}

// claim is an element a Service asks for. An owned claim (owner set) is
// exclusive: when several Services claim one key, the first in the
// snapshot gets it and the others get a Problem. A shared claim (owner "")
// may be made by any number of Services; the element exists while one does.
type claim struct {
	set   string
	owner string
	field string // what the owner claims it with, for the Problem
	// key is packKey(set, the element's key): what the claim is
	// exclusive over, and where element() reads the key back from.
	key     string
	verdict nft.Verdict
	data    string // packValues(the element's Data)
	comment string // the element's Comment: the Service port that claims it
	// lists are the endpoint lists (lists.go) that come with an entry of
	// the entry sets or maps (servicesRules), packed: they are programmed
	// exactly when the entry is, so two Services claiming one key never mix
	// their endpoints.
	lists string
}

// eachClaim calls shared with each of b's shared claims and owned with
// each of its owned ones.
func (b *builder) eachClaim(shared, owned func(*claim)) {
	for i := range b.claims {
		cl := &b.claims[i]
		if cl.owner == "" {
			shared(cl)
		} else {
			owned(cl)
		}
	}
}

// element returns the element cl asks for.
func (cl *claim) element() nft.Element {
	return nft.Element{Key: unpackKey(cl.set, cl.key), Verdict: cl.verdict, Data: unpackValues(cl.data), Comment: cl.comment}
}

// addTo adds the element cl asks for, and the elements of its endpoint
// lists, to the sets of t; an endpoint map t lacks is added.
func (cl *claim) addTo(t *nft.Table) {
	_ = cl.elements(func(set string, e nft.Element) error {
		s := t.Set(set)
		if s == nil {
			m, rung, _ := parseListMap(set)
			s = listSet(t.Family, m, rung)
			t.Sets = append(t.Sets, s)
		}
		s.Elements = append(s.Elements, e)
		return nil
	})
}

// elements calls add with the element cl asks for, then the elements of
// its endpoint lists, each with the name of its set; it stops at add's
// first error.
func (cl *claim) elements(add func(set string, e nft.Element) error) error {
	if err := add(cl.set, cl.element()); err != nil || cl.lists == "" {
		return err
	}
	key := unpackKey(cl.set, cl.key)
	for _, l := range unpackLists(cl.lists) {
		for _, e := range listElements(key, l) {
			if err := add(l.mapName(), e); err != nil {
				return err
			}
		}
	}
	return nil
}

func newClaim(set, owner, field, key string, e nft.Element) claim {
	return claim{set: set, owner: owner, field: field, key: key, verdict: e.Verdict, data: packValues(e.Data), comment: e.Comment}
}

func newBuilder(f nft.Family) *builder {
	return &builder{family: f, sets: setDefs[familyIndex(f)]}
}

// trim returns b for a unit to keep: its slices cut to their length (a
// Tables value keeps one unit per Service, 10,000 and more, for as long as the
// Service lives), or the family's shared empty builder when b holds
// nothing (the other family of a single-stack Service).
func (b *builder) trim(fi int) *builder {
	if len(b.chains) == 0 && len(b.claims) == 0 {
		return emptyBuilders[fi]
	}
	b.chains = slices.Clone(b.chains)
	b.claims = slices.Clone(b.claims)
	return b
}

// emptyBuilders are what a Service adds to a family it has no address of;
// shared by every such unit, and never changed (units are immutable).
var emptyBuilders = [2]*builder{newBuilder(nft.IPv4), newBuilder(nft.IPv6)}

// setDefs are each family's set definitions, without elements.
var setDefs = func() [2]map[string]*nft.Set {
	var out [2]map[string]*nft.Set
	for i, f := range nft.Families {
		out[i] = map[string]*nft.Set{}
		for _, spec := range sets {
			out[i][spec.name] = spec.set(f)
		}
	}
	return out
}()

// addElement adds e to the named set as shared content: elements several
// Services may add alike (a ClusterIP, a hairpin pair).
func (b *builder) addElement(set string, e nft.Element) {
	b.claims = append(b.claims, newClaim(set, "", "", claimKey(set, e.Key), e))
}

// claimElement asks for e in the named set on behalf of owner, naming the
// field that asks for it. It returns the claim's index. A key the same
// owner already claimed is not claimed twice: the first claim stands.
func (b *builder) claimElement(set, owner, field string, e nft.Element, lists ...endpointList) int {
	key := claimKey(set, e.Key)
	for i, c := range b.claims {
		if c.key == key && c.owner == owner {
			return i
		}
	}
	cl := newClaim(set, owner, field, key, e)
	cl.lists = packLists(lists)
	b.claims = append(b.claims, cl)
	return len(b.claims) - 1
}

// claimKey identifies what a claim is exclusive over. A Service IP and
// port is claimed once whichever entry set it goes to, and likewise a
// NodePort.
func claimKey(set string, key []nft.Value) string { return packKey(set, key) }

// keySpace names the address space a set's keys live in.
func keySpace(set string) string {
	switch {
	case slices.Contains(nft.ServiceIPEntrySets, set):
		return "service-ip"
	case slices.Contains(nft.NodePortEntrySets, set):
		return "nodeport"
	}
	return set
}
