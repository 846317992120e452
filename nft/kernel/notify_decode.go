package kernel

import (
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// decode returns the changes one announcement makes to our tables: none
// for another table, one per element for an element message.
func (s *subscription) decode(m netlink.Message) []nft.Change {
	if len(m.Data) < 4 {
		return nil
	}
	f, ok := familyOf(m.Data[0])
	if !ok {
		return nil
	}
	typ := int(m.Header.Type & 0xff)
	msg, ok := messages[typ]
	if !ok {
		return nil // flowtables: not part of our tables
	}
	a := announcedAttrs(m.Data[4:], typ, msg.nameAttr)
	if a.table != nft.TableName {
		return nil
	}
	kind := msg.kind
	switch typ {
	case unix.NFT_MSG_NEWSETELEM, unix.NFT_MSG_DELSETELEM:
		return s.elementChanges(f, kind, a.name, m.Data)
	case unix.NFT_MSG_NEWCHAIN:
		if m.Header.Flags&netlink.Create == 0 {
			kind = nft.ChainChanged // an update: a rename, a policy
		}
	case unix.NFT_MSG_NEWTABLE, unix.NFT_MSG_DELTABLE:
		s.defs.forget(f)
	case unix.NFT_MSG_NEWSET, unix.NFT_MSG_DELSET:
		if !a.anonymous {
			s.defs.forget(f)
		}
	}
	return []nft.Change{{Kind: kind, Family: f, Name: a.name, Base: a.hook, Anonymous: a.anonymous}}
}

// A message is what decode knows of one message type: the change it
// announces and the attribute holding its object's name (every message
// names its table first).
type message struct {
	kind     nft.ChangeKind
	nameAttr uint16
}

// messages are the message types decode reads, by type: one line per
// kind of object, its new and its delete message.
var messages = map[int]message{
	unix.NFT_MSG_NEWTABLE: {nft.TableAdded, unix.NFTA_TABLE_NAME}, unix.NFT_MSG_DELTABLE: {nft.TableDeleted, unix.NFTA_TABLE_NAME},
	unix.NFT_MSG_NEWCHAIN: {nft.ChainAdded, unix.NFTA_CHAIN_NAME}, unix.NFT_MSG_DELCHAIN: {nft.ChainDeleted, unix.NFTA_CHAIN_NAME},
	unix.NFT_MSG_NEWRULE: {nft.RuleAdded, unix.NFTA_RULE_CHAIN}, unix.NFT_MSG_DELRULE: {nft.RuleDeleted, unix.NFTA_RULE_CHAIN},
	unix.NFT_MSG_NEWSET: {nft.SetAdded, unix.NFTA_SET_NAME}, unix.NFT_MSG_DELSET: {nft.SetDeleted, unix.NFTA_SET_NAME},
	unix.NFT_MSG_NEWSETELEM: {nft.ElementAdded, unix.NFTA_SET_ELEM_LIST_SET}, unix.NFT_MSG_DELSETELEM: {nft.ElementDeleted, unix.NFTA_SET_ELEM_LIST_SET},
	unix.NFT_MSG_NEWOBJ: {nft.CounterAdded, unix.NFTA_OBJ_NAME}, unix.NFT_MSG_DELOBJ: {nft.CounterDeleted, unix.NFTA_OBJ_NAME},
}

func familyOf(b byte) (nft.Family, bool) {
	switch b {
	case unix.NFPROTO_IPV4:
		return nft.IPv4, true
	case unix.NFPROTO_IPV6:
		return nft.IPv6, true
	}
	return "", false
}

// announced is what decode reads of a message's attributes.
type announced struct {
	table, name string
	hook        bool // a chain with a hook: a base chain
	anonymous   bool // a set of one rule's
}

// announcedAttrs reads the attributes of a message of type typ, whose
// object's name is in the attribute nameAttr.
func announcedAttrs(b []byte, typ int, nameAttr uint16) announced {
	var a announced
	isTable := typ == unix.NFT_MSG_NEWTABLE || typ == unix.NFT_MSG_DELTABLE
	isChain := typ == unix.NFT_MSG_NEWCHAIN || typ == unix.NFT_MSG_DELCHAIN
	isSet := typ == unix.NFT_MSG_NEWSET || typ == unix.NFT_MSG_DELSET
	_ = walkAttrs(b, func(t uint16, data []byte) error {
		switch {
		case t == 1: // NFTA_{TABLE_NAME,CHAIN_TABLE,RULE_TABLE,SET_TABLE,SET_ELEM_LIST_TABLE,OBJ_TABLE}
			a.table = attrString(data)
		case t == nameAttr && !isTable:
			a.name = attrString(data)
		case isChain && t == unix.NFTA_CHAIN_HOOK:
			a.hook = true
		case isSet && t == unix.NFTA_SET_FLAGS && len(data) == 4:
			a.anonymous = data[3]&unix.NFT_SET_ANONYMOUS != 0 // big endian
		}
		return nil
	})
	return a
}

// elementChanges decodes the elements of one element message against the
// definition of their set; an element of a set we cannot find is reported
// undecoded (nil), and those of a rule's anonymous set not at all. Those of
// a range set (service-cidrs) wait for the end of the transaction, to be
// paired into ranges (notify_range.go).
func (s *subscription) elementChanges(f nft.Family, kind nft.ChangeKind, set string, data []byte) []nft.Change {
	elems, err := appendElements(nil, data)
	def := s.defs.get(f, set)
	if err != nil {
		return []nft.Change{{Kind: kind, Family: f, Name: set}}
	}
	if def != nil && isRangeSet(def) {
		s.gatherRange(f, kind, set, elems)
		return nil
	}
	out := make([]nft.Change, 0, len(elems))
	for _, e := range elems {
		c := nft.Change{Kind: kind, Family: f, Name: set}
		if def != nil {
			d := decodeElement(def, e)
			c.Element = &d
		}
		out = append(out, c)
	}
	return out
}

// setDefs caches the definitions of our sets as the kernel holds them, per
// family, read when an element of the family is first announced and again
// after any of our sets or tables changed.
type setDefs struct {
	k    *Kernel
	byFa map[nft.Family]map[string]*nft.Set
}

func (d *setDefs) get(f nft.Family, name string) *nft.Set {
	if d.byFa == nil {
		d.byFa = map[nft.Family]map[string]*nft.Set{}
	}
	defs, ok := d.byFa[f]
	if !ok {
		defs = d.k.readSetDefs(f)
		d.byFa[f] = defs
	}
	return defs[name]
}

func (d *setDefs) forget(f nft.Family) { delete(d.byFa, f) }

// readSetDefs reads the definitions of our sets of family f, or none when
// they cannot be read (the table is gone). It uses connections of its own:
// the lasting one belongs to Read and Apply.
func (k *Kernel) readSetDefs(f nft.Family) map[string]*nft.Set {
	out := map[string]*nft.Set{}
	var opts []nftables.ConnOption
	if k.nsFD >= 0 {
		opts = append(opts, nftables.WithNetNSFd(k.nsFD))
	}
	conn, err := nftables.New(opts...)
	if err != nil {
		return out
	}
	kt := tableOf(f)
	sets, err := getSets(conn, kt)
	if err != nil {
		return out
	}
	uds, err := k.setUserdata(kt)
	if err != nil {
		return out
	}
	for _, ks := range sets {
		out[ks.Name] = decodeSet(f, ks, uds[ks.Name])
	}
	return out
}
