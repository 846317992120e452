package kernel

import (
	"strings"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// Set definitions go to the kernel through google/nftables (newSet) and
// come back from its GetSets (decodeSet).

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
}

// decodeSet reads a set's definition: key and data types, flags, size.
func decodeSet(ks *nftables.Set) *nft.Set {
	s := &nft.Set{Name: ks.Name, Map: ks.IsMap, Comment: ks.Comment, Interval: ks.Interval,
		Dynamic: ks.Dynamic, Size: ks.Size}
	s.Key = typeNames(ks.KeyType.Name)
	if ks.IsMap && ks.DataType.Name != nftables.TypeVerdict.Name {
		s.Data = typeNames(ks.DataType.Name)
	}
	return s
}

func typeNames(name string) []nft.DataType {
	var out []nft.DataType
	for _, n := range strings.Split(name, " . ") {
		out = append(out, nft.DataType(n))
	}
	return out
}
