package dataplane

import (
	"encoding/binary"
	"maps"
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
)

// drift is what somebody else's transactions changed in our tables since
// the kernel last held exactly the mirror, as the kernel announced them.
// With the mirror it tells what the kernel holds of every object it names,
// so a repair touches those objects only.
type drift map[nft.Family]*familyDrift

type familyDrift struct {
	// replace: the table itself, one of its sets or a base chain changed,
	// or an element could not be decoded: the table is rebuilt whole.
	replace bool
	// elements: set name, then element key, to what the kernel holds for
	// that key now (nil: nothing).
	elements map[string]map[string]*heldElement
	chains   map[string]*heldChain
	// setsDeleted names the sets deleted: the table is rebuilt when one
	// of them is ours (a rule's anonymous set is not, and the kernel's
	// announcement of its deletion does not say it was anonymous).
	setsDeleted map[string]bool
}

type heldElement struct {
	key []nft.Value
	now *nft.Element
}

// heldChain is what the kernel holds of a chain: whether it exists, when
// announced (otherwise as the mirror has it), and whether its rules may
// differ from the mirror's.
type heldChain struct {
	announced, exists bool
	rules             bool
}

func (d drift) empty() bool { return len(d) == 0 }

// add records the changes of one transaction, in order.
func (d drift) add(changes []nft.Change) {
	for _, c := range changes {
		d.family(c.Family).add(c)
	}
}

func (d drift) family(f nft.Family) *familyDrift {
	fd := d[f]
	if fd == nil {
		fd = &familyDrift{elements: map[string]map[string]*heldElement{}, chains: map[string]*heldChain{},
			setsDeleted: map[string]bool{}}
		d[f] = fd
	}
	return fd
}

func (fd *familyDrift) add(c nft.Change) {
	if fd.replace {
		return // the table is rebuilt whole anyway
	}
	switch c.Kind {
	case nft.TableAdded, nft.TableDeleted, nft.ChainChanged:
		fd.replace = true
	case nft.CounterAdded, nft.CounterDeleted:
		// Counters are fixed structure, and one of ours can only go with
		// the rules that count into it: rebuild, as for a set.
		fd.replace = true
	case nft.SetAdded:
		fd.replace = fd.replace || !c.Anonymous
	case nft.SetDeleted:
		fd.setsDeleted[c.Name] = true
	case nft.ChainAdded:
		fd.replace = fd.replace || c.Base
		fd.chains[c.Name] = &heldChain{announced: true, exists: true, rules: true}
	case nft.ChainDeleted:
		fd.chains[c.Name] = &heldChain{announced: true}
	case nft.RuleAdded, nft.RuleDeleted:
		fd.chain(c.Name).rules = true
	case nft.ElementAdded, nft.ElementDeleted:
		fd.element(c)
	}
}

func (fd *familyDrift) chain(name string) *heldChain {
	hc := fd.chains[name]
	if hc == nil {
		hc = &heldChain{}
		fd.chains[name] = hc
	}
	return hc
}

func (fd *familyDrift) element(c nft.Change) {
	if c.Element == nil {
		// An element we cannot read in a set of ours leaves the set
		// unknown; one in a set of somebody else's rule does not matter.
		fd.elements[c.Name] = nil
		return
	}
	held := fd.elements[c.Name]
	if held == nil {
		if _, unknown := fd.elements[c.Name]; unknown {
			return
		}
		held = map[string]*heldElement{}
		fd.elements[c.Name] = held
	}
	he := &heldElement{key: c.Element.Key}
	if c.Kind == nft.ElementAdded {
		he.now = c.Element
	}
	held[keyID(c.Element.Key)] = he
}

// keyID identifies an element key whatever its set's types: each part's
// address (length-prefixed), number and prefix, in binary. A one-address
// prefix counts as the address, and a prefix as its masked form: the kernel
// hands the address parts of an interval set back as prefixes, which the
// compiler writes either way.
func keyID(key []nft.Value) string {
	b := make([]byte, 0, 16*len(key))
	for _, v := range key {
		switch {
		case v.Prefix.IsSingleIP():
			v.Addr, v.Prefix = v.Prefix.Addr(), netip.Prefix{}
		case v.Prefix.IsValid():
			v.Prefix = v.Prefix.Masked()
		}
		b = appendAddr(b, v.Addr)
		b = binary.BigEndian.AppendUint32(b, v.Num)
		b = appendAddr(b, v.Prefix.Addr())
		b = append(b, byte(v.Prefix.Bits()+1))
	}
	return string(b)
}

func appendAddr(b []byte, a netip.Addr) []byte {
	b = append(b, byte(a.BitLen()/8))
	if a.Is4() {
		a4 := a.As4()
		return append(b, a4[:]...)
	}
	if a.Is6() {
		a16 := a.As16()
		b = append(b, a16[:]...)
		return append(append(b, byte(len(a.Zone()))), a.Zone()...)
	}
	return b
}

// plan returns the operations that turn what the kernel holds of the
// drifted objects into what the mirror wants, family by family.
func (d drift) plan(mirror *compile.Tables) *nft.Plan {
	p := &nft.Plan{}
	for _, f := range nft.Families {
		if fd := d[f]; fd != nil {
			p.Append(fd.plan(f, mirror))
		}
	}
	return p
}

func (fd *familyDrift) plan(f nft.Family, mirror *compile.Tables) []nft.Op {
	if fd.replace {
		return replaceTable(f, mirror)
	}
	want := mirror.Part(f, fd.keys(), fd.chainNames())
	if want == nil || fd.lostSet(want) {
		return replaceTable(f, mirror)
	}
	held, ok := fd.held(want)
	if !ok {
		return replaceTable(f, mirror)
	}
	// Elements are compared here, key by key; the differ would render
	// every element of both sides as text, seconds when somebody flushed
	// a map of 100,000 elements.
	chains := nft.DiffTable(f, held, withoutElements(want))
	if slices.ContainsFunc(chains, func(op nft.Op) bool { return op.Kind == nft.DeleteTable }) {
		// The differ found the structures different after all: a partial
		// table must never replace the whole one.
		return replaceTable(f, mirror)
	}
	del, add := fd.elementOps(want)
	return append(append(del, chains...), add...)
}

// lostSet reports whether one of the sets of want was deleted.
func (fd *familyDrift) lostSet(want *nft.Table) bool {
	for name := range fd.setsDeleted {
		if want.Set(name) != nil {
			return true
		}
	}
	return false
}

// replaceTable rebuilds our table of family f whole, or deletes it when
// the mirror has none: valid whatever the kernel holds.
func replaceTable(f nft.Family, mirror *compile.Tables) []nft.Op {
	want := mirror.Table(f)
	if want == nil {
		return nft.DiffTable(f, &nft.Table{Family: f, Name: nft.TableName}, nil)
	}
	return nft.DiffTable(f, nil, want)
}

func (fd *familyDrift) keys() map[string][][]nft.Value {
	out := make(map[string][][]nft.Value, len(fd.elements))
	for set, held := range fd.elements {
		for _, he := range held {
			out[set] = append(out[set], he.key)
		}
	}
	return out
}

func (fd *familyDrift) chainNames() []string {
	out := make([]string, 0, len(fd.chains))
	for name := range fd.chains {
		out = append(out, name)
	}
	return out
}

// unknownRules stands for the rules of a chain somebody changed: they
// never equal the mirror's, so the chain is flushed and filled again.
var unknownRules = []nft.Rule{{Stmts: []nft.Stmt{nft.Foreign{Desc: "changed by someone else"}}}}

// held returns what the kernel holds of the drifted chains, as a partial
// table with the same sets as want, without elements, or false when that
// cannot be patched (a base chain is gone, or one of our sets is unknown).
func (fd *familyDrift) held(want *nft.Table) (*nft.Table, bool) {
	t := withoutElements(want)
	t.Chains = nil
	for _, ws := range want.Sets {
		if held, drifted := fd.elements[ws.Name]; drifted && held == nil && !ws.Dynamic {
			return nil, false
		}
	}
	for _, name := range fd.chainNames() {
		c, ok := fd.heldChain(name, want.Chain(name))
		if !ok {
			return nil, false
		}
		if c != nil {
			t.Chains = append(t.Chains, c)
		}
	}
	return t, true
}

// withoutElements returns t with its sets emptied.
func withoutElements(t *nft.Table) *nft.Table {
	out := &nft.Table{Family: t.Family, Name: t.Name, Comment: t.Comment, Chains: t.Chains}
	for _, s := range t.Sets {
		def := *s
		def.Elements = nil
		out.Sets = append(out.Sets, &def)
	}
	return out
}

// elementOps returns the operations that delete the elements the kernel
// holds and the mirror does not want (or wants otherwise), and add those
// the mirror wants and the kernel lacks, among the drifted keys. The
// elements of dynamic sets belong to the packet path.
func (fd *familyDrift) elementOps(want *nft.Table) (del, add []nft.Op) {
	for _, ws := range want.Sets {
		held := fd.elements[ws.Name]
		if len(held) == 0 || ws.Dynamic {
			continue
		}
		wanted := make(map[string]nft.Element, len(ws.Elements))
		for _, e := range ws.Elements {
			wanted[keyID(e.Key)] = e
		}
		// Sized up front: a flushed map comes back whole, 100,000 elements
		// and more, which growing by doubling would copy again and again.
		gone, come := make([]nft.Element, 0, heldNow(held)), make([]nft.Element, 0, len(wanted))
		for _, id := range slices.Sorted(maps.Keys(held)) {
			now := held[id].now
			w, ok := wanted[id]
			if now != nil && ok && sameElement(ws, *now, w) {
				continue
			}
			if now != nil {
				gone = append(gone, *now)
			}
			if ok {
				come = append(come, w)
			}
		}
		f, name := want.Family, ws.Name
		if len(gone) > 0 {
			del = append(del, nft.Op{Kind: nft.DeleteElements, Family: f, Name: name, Set: ws, Elements: gone})
		}
		if len(come) > 0 {
			add = append(add, nft.Op{Kind: nft.AddElements, Family: f, Name: name, Set: ws, Elements: come})
		}
	}
	return del, add
}

// heldNow counts the drifted keys for which the kernel holds an element.
func heldNow(held map[string]*heldElement) int {
	n := 0
	for _, he := range held {
		if he.now != nil {
			n++
		}
	}
	return n
}

// sameElement reports whether the kernel's element a is the mirror's b:
// equal values and comment, or the same text (how the differ compares
// them, comment included: an entry re-added without its comment is
// repaired).
func sameElement(s *nft.Set, a, b nft.Element) bool {
	if slices.Equal(a.Key, b.Key) && a.Verdict == b.Verdict && slices.Equal(a.Data, b.Data) && a.Comment == b.Comment {
		return true
	}
	return s.ElementText(a) == s.ElementText(b)
}

// heldChain returns what the kernel holds of chain name (nil: nothing)
// given the mirror's chain w (nil: none wanted).
func (fd *familyDrift) heldChain(name string, w *nft.Chain) (*nft.Chain, bool) {
	hc := fd.chains[name]
	exists := w != nil
	if hc.announced {
		exists = hc.exists
	}
	switch {
	case w != nil && w.Base != nil && (!exists || hc.announced):
		return nil, false // a base chain gone or made anew: the table is rebuilt
	case !exists:
		return nil, true
	}
	c := &nft.Chain{Name: name}
	if w != nil {
		c.Base, c.Rules = w.Base, w.Rules
	}
	if hc.rules || w == nil {
		c.Rules = unknownRules
	}
	return c, true
}
