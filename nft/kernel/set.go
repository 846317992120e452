package kernel

import (
	"fmt"
	"strings"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Set definitions go to the kernel through google/nftables (newSet), with
// the typeof declaration added to the userdata it writes (addSet); they
// come back from its GetSets (decodeSet), and their userdata from a dump
// of our own (setUserdata), since GetSets keeps only the comment.

// newSet is s's definition in table t, for AddSet and element operations.
func newSet(t *nftables.Table, s *nft.Set) *nftables.Set {
	types := make([]nftables.SetDatatype, len(s.Key))
	for i, k := range s.Key {
		types[i] = setDataTypes[k]
	}
	key := types[0]
	if len(types) > 1 {
		key, _ = nftables.ConcatSetType(types...) // at most 3 parts, never too many
	}
	set := &nftables.Set{Table: t, Name: s.Name, KeyType: key, Concatenation: len(types) > 1, Comment: s.Comment,
		Interval: s.Interval, Dynamic: s.Dynamic, HasTimeout: s.Dynamic, Size: s.Size}
	if s.Map {
		set.IsMap = true
		set.DataType = mapDataType(s)
	}
	return set
}

// mapDataType is what a map's elements map to: a verdict, or the
// (possibly concatenated) value types of a data map.
func mapDataType(s *nft.Set) nftables.SetDatatype {
	if len(s.Data) == 0 {
		return nftables.TypeVerdict
	}
	types := make([]nftables.SetDatatype, len(s.Data))
	for i, d := range s.Data {
		types[i] = setDataTypes[d]
	}
	if len(types) == 1 {
		return types[0]
	}
	t, _ := nftables.ConcatSetType(types...) // at most 2 parts
	return t
}

// setDataTypes maps our data types to the kernel's type identifiers.
var setDataTypes = map[nft.DataType]nftables.SetDatatype{
	nft.TypeIPv4Addr: nftables.TypeIPAddr, nft.TypeIPv6Addr: nftables.TypeIP6Addr,
	nft.TypeInetProto: nftables.TypeInetProto, nft.TypeInetService: nftables.TypeInetService,
	// One byte for google/nftables; every part of a concatenation takes
	// whole 32-bit words, so a numgen part is 4 bytes, as nft has it.
	nft.TypeInteger: nftables.TypeInteger,
}

// addSet adds s to table t of family f. google/nftables writes the NEWSET
// message; a set declared by typeof gets its typeof userdata added to it.
func (k *Kernel) addSet(f nft.Family, t *nftables.Table, s *nft.Set) error {
	typeof, err := typeofUdata(f, s)
	if err != nil {
		return err
	}
	if typeof == nil {
		return k.batch.AddSet(newSet(t, s), nil)
	}
	if err := k.drain(); err != nil { // the NEWSET message must be the only one captured
		return err
	}
	if err := k.batch.AddSet(newSet(t, s), nil); err != nil {
		return err
	}
	if err := k.batch.Flush(); err != nil {
		k.captured.take()
		return fmt.Errorf("marshal: %w", err)
	}
	msgs := k.captured.take()
	if len(msgs) != 3 { // batch begin, NEWSET, batch end (see drain)
		return fmt.Errorf("marshal set %s: %d messages, want 3", s.Name, len(msgs))
	}
	data, err := withUserdata(msgs[1].Data, typeof)
	if err != nil {
		return fmt.Errorf("marshal set %s: %w", s.Name, err)
	}
	k.out.message(uint16(msgs[1].Header.Type), uint16(msgs[1].Header.Flags&^netlink.Echo), data)
	return nil
}

// withUserdata returns a NEWSET message's payload (nfgenmsg and
// attributes) with extra appended to its userdata.
func withUserdata(data, extra []byte) ([]byte, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("short message")
	}
	attrs, err := netlink.UnmarshalAttributes(data[4:])
	if err != nil {
		return nil, err
	}
	found := false
	for i := range attrs {
		if attrs[i].Type == unix.NFTA_SET_USERDATA {
			attrs[i].Data = append(attrs[i].Data, extra...)
			attrs[i].Length = 0 // recomputed by MarshalAttributes
			found = true
		}
	}
	if !found {
		attrs = append(attrs, netlink.Attribute{Type: unix.NFTA_SET_USERDATA, Data: extra})
	}
	b, err := netlink.MarshalAttributes(attrs)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(nil), data[:4]...), b...), nil
}

// setUserdata dumps the sets of table t and returns their userdata by name.
func (k *Kernel) setUserdata(t *nftables.Table) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := k.dump(unix.NFT_MSG_GETSET, byte(t.Family), []netlink.Attribute{{Type: unix.NFTA_SET_TABLE, Data: []byte(t.Name + "\x00")}},
		func(data []byte) error {
			if len(data) < 4 {
				return nil
			}
			var name string
			var ud []byte
			err := walkAttrs(data[4:], func(typ uint16, payload []byte) error {
				switch typ {
				case unix.NFTA_SET_NAME:
					name = attrString(payload)
				case unix.NFTA_SET_USERDATA:
					ud = append([]byte(nil), payload...)
				}
				return nil
			})
			out[name] = ud
			return err
		})
	return out, err
}

// decodeSet reads a set's definition: key and data types, flags, size, and
// the typeof declaration in its userdata ud. A declaration we would not
// write makes a key type nobody uses, so the set differs from ours.
func decodeSet(f nft.Family, ks *nftables.Set, ud []byte) *nft.Set {
	s := &nft.Set{Name: ks.Name, Map: ks.IsMap, Comment: ks.Comment, Interval: ks.Interval,
		Dynamic: ks.Dynamic, Size: ks.Size}
	s.Key = typeNames(ks.KeyType.Name)
	if ks.IsMap && ks.DataType.Name != nftables.TypeVerdict.Name {
		s.Data = typeNames(ks.DataType.Name)
	}
	key, data, ok := decodeTypeof(f, ud, ks.IsMap)
	if !ok {
		s.Key = append(s.Key, "unknown typeof")
	}
	s.Typeof, s.DataTypeof = key, data
	return s
}

func typeNames(name string) []nft.DataType {
	var out []nft.DataType
	for _, n := range strings.Split(name, " . ") {
		out = append(out, nft.DataType(n))
	}
	return out
}
