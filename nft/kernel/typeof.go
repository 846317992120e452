package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/google/nftables/userdata"

	"github.com/nftproxy/nftproxy/nft"
)

// A set declared with typeof (nft.Set.Typeof) carries, in its userdata,
// the expressions that build its keys and values. The kernel ignores them;
// nft reads them to list the set as `typeof ip daddr . numgen random mod
// 1`, and cannot list or reload it without them: a numgen part's type,
// integer, has no size of its own, which a `type` line cannot express.
//
// The format is nft's (checked against nft 1.0.6 by the real-kernel tests,
// which list and reload what we write): nested userdata TLVs of one byte
// type, one byte length and the value, numbers as 4 bytes in host order.
// An expression is {0: its kind, 1: its description}; a concatenation's
// description is its parts, numbered from 0.

// The userdata types of a set that carry typeof expressions.
const (
	udataKeyTypeof  userdata.Type = 3 // NFTNL_UDATA_SET_KEY_TYPEOF
	udataDataTypeof userdata.Type = 4 // NFTNL_UDATA_SET_DATA_TYPEOF
)

// The kinds of expression we declare sets with (nft's enum expr_types).
const (
	exprPayload uint32 = 7
	exprMeta    uint32 = 9
	exprConcat  uint32 = 13
	exprNumgen  uint32 = 23
)

// payloadDesc names a payload field the way nft's udata does: the header
// (enum proto_desc_id) and the field's index in it.
type payloadDesc struct{ header, field uint32 }

// payloadDescs are the payload fields our typeof sets use, by family.
var payloadDescs = map[nft.Family]map[nft.Field]payloadDesc{
	nft.IPv4: {nft.Saddr: {12, 11}, nft.Daddr: {12, 12}, nft.Dport: {11, 2}},
	nft.IPv6: {nft.Saddr: {13, 8}, nft.Daddr: {13, 9}, nft.Dport: {11, 2}},
}

const (
	metaL4Proto       uint32 = 16 // NFT_META_L4PROTO
	udataNumgenRandom uint32 = 1  // NFT_NG_RANDOM
)

// typeofUdata returns the userdata TLVs that declare s by typeof, to add
// to the set's userdata; nil for a set declared by type.
func typeofUdata(f nft.Family, s *nft.Set) ([]byte, error) {
	if len(s.Typeof) == 0 {
		return nil, nil
	}
	key, err := typeofExpr(f, s.Typeof)
	if err != nil {
		return nil, fmt.Errorf("set %s: %w", s.Name, err)
	}
	ud := userdata.Append(nil, udataKeyTypeof, key)
	if s.Map {
		data, err := typeofExpr(f, s.DataTypeof)
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", s.Name, err)
		}
		ud = userdata.Append(ud, udataDataTypeof, data)
	}
	return ud, nil
}

// typeofExpr describes the concatenation of fields (or one field alone).
func typeofExpr(f nft.Family, fields []nft.Field) ([]byte, error) {
	if len(fields) == 1 {
		return fieldExpr(f, fields[0])
	}
	var parts []byte
	for i, field := range fields {
		part, err := fieldExpr(f, field)
		if err != nil {
			return nil, err
		}
		parts = userdata.Append(parts, userdata.Type(i), part)
	}
	return exprUdata(exprConcat, parts), nil
}

// fieldExpr describes one key part.
func fieldExpr(f nft.Family, field nft.Field) ([]byte, error) {
	switch field {
	case nft.L4Proto:
		return exprUdata(exprMeta, udataUint32s(metaL4Proto)), nil
	case nft.Number:
		return exprUdata(exprNumgen, udataUint32s(udataNumgenRandom, 1, 0)), nil
	}
	d, ok := payloadDescs[f][field]
	if !ok {
		return nil, fmt.Errorf("no typeof for field %d", field)
	}
	return exprUdata(exprPayload, udataUint32s(d.header, d.field)), nil
}

func exprUdata(kind uint32, desc []byte) []byte {
	return userdata.Append(userdata.AppendUint32(nil, 0, kind), 1, desc)
}

// udataUint32s numbers vs from 0, each a 4-byte host-order value.
func udataUint32s(vs ...uint32) []byte {
	var b []byte
	for i, v := range vs {
		b = userdata.AppendUint32(b, userdata.Type(i), v)
	}
	return b
}

// decodeTypeof reads the typeof declaration of a set from its userdata:
// nil fields when it has none. A declaration we would not write decodes
// to ok false.
func decodeTypeof(f nft.Family, ud []byte, isMap bool) (key, data []nft.Field, ok bool) {
	kb := udataGet(ud, udataKeyTypeof)
	if kb == nil {
		return nil, nil, true
	}
	if key, ok = decodeTypeofExpr(f, kb); !ok {
		return nil, nil, false
	}
	if !isMap {
		return key, nil, true
	}
	data, ok = decodeTypeofExpr(f, udataGet(ud, udataDataTypeof))
	return key, data, ok
}

func decodeTypeofExpr(f nft.Family, b []byte) ([]nft.Field, bool) {
	kind, desc := udataGet(b, 0), udataGet(b, 1)
	if len(kind) != 4 || desc == nil {
		return nil, false
	}
	if binary.LittleEndian.Uint32(kind) != exprConcat {
		field, ok := decodeField(f, b)
		return []nft.Field{field}, ok
	}
	var fields []nft.Field
	for i := 0; ; i++ {
		part := udataGet(desc, userdata.Type(i))
		if part == nil {
			return fields, len(fields) > 1
		}
		field, ok := decodeField(f, part)
		if !ok {
			return nil, false
		}
		fields = append(fields, field)
	}
}

// decodeField reads one part as fieldExpr writes it.
func decodeField(f nft.Family, b []byte) (nft.Field, bool) {
	for _, field := range []nft.Field{nft.Saddr, nft.Daddr, nft.L4Proto, nft.Dport, nft.Number} {
		want, err := fieldExpr(f, field)
		if err == nil && string(want) == string(b) {
			return field, true
		}
	}
	return 0, false
}

// udataString returns the string (NUL-terminated or not) of the first TLV
// of type typ in b: userdata.GetString without its panic.
func udataString(b []byte, typ userdata.Type) (string, bool) {
	v := udataGet(b, typ)
	if v == nil {
		return "", false
	}
	return string(bytes.TrimSuffix(v, []byte{0})), true
}

// udataGet returns the value of the first TLV of type typ in b, or nil. It
// is userdata.Get without its panic on a length past the end: what we read
// back may have been written by anyone.
func udataGet(b []byte, typ userdata.Type) []byte {
	for len(b) >= 2 {
		n := int(b[1])
		if len(b) < 2+n {
			return nil
		}
		if userdata.Type(b[0]) == typ {
			return b[2 : 2+n]
		}
		b = b[2+n:]
	}
	return nil
}
