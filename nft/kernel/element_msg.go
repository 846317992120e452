package kernel

import (
	"encoding/binary"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Element messages are written by our batchWriter too, like rules
// (batch.go), not by google/nftables' SetAddElements. The library turns
// each element into a SetElement, then a list of netlink attributes
// marshalled one nesting level at a time, then a message it keeps until
// Flush, which we copy into the batch: about ten allocations and three
// copies per element. A first sync at 10,000 Services x 10 endpoints has
// 120,000 elements: that was 70 MB allocated, a sixth of the sync's CPU
// and a good part of its peak memory (pprof, kernel 6.18). Here each
// element is appended straight into the message, which goes straight into
// the batch's chunks.
//
// The messages are the library's, byte for byte (element attributes, their
// order and numbering, and the split into messages under the 64 KiB
// attribute limit): TestElementMessagesMatchGoogleNftables fails if a
// release of google/nftables writes them differently. Range sets (one
// interval key part: a start and an end element for each range, flags on
// the end) hold a handful of elements and still go through the library
// (encodeElements).

const (
	newSetElemType = unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWSETELEM
	delSetElemType = unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_DELSETELEM
	setElemFlags   = unix.NLM_F_REQUEST | unix.NLM_F_CREATE
	// maxElemBytes bounds the encoded elements of one message: the length
	// of the attribute that holds them is 16 bits (google/nftables'
	// maxElemBatchSize).
	maxElemBytes = 1<<16 - 1 - 1024
)

// elements appends the messages that add (typ newSetElemType) or delete
// (delSetElemType) elems in set s of our table in family f.
func (w *batchWriter) elements(typ uint16, f nft.Family, s *nft.Set, elems []nft.Element) {
	for i := 0; i < len(elems); {
		i = w.elementMessage(typ, f, s, elems, i)
	}
}

// elementMessage appends one message with the elements from elems[first]
// on that fit, and returns the index of the first one left out.
func (w *batchWriter) elementMessage(typ uint16, f nft.Family, s *nft.Set, elems []nft.Element, first int) int {
	b := w.scratch[:0]
	b = appendHeader(b, typ, setElemFlags)
	b = append(b, byte(tableOf(f).Family), unix.NFNETLINK_V0, 0, 0) // struct nfgenmsg
	b = appendString(b, unix.NFTA_SET_ELEM_LIST_SET, s.Name)
	b = appendAttr(b, unix.NFTA_SET_ELEM_LIST_SET_ID, []byte{0, 0, 0, 0}) // no set ID: the set is named
	b = appendString(b, unix.NFTA_SET_ELEM_LIST_TABLE, nft.TableName)
	list := len(b)
	b = appendAttr(b, unix.NLA_F_NESTED|unix.NFTA_SET_ELEM_LIST_ELEMENTS, nil)
	i := first
	for ; i < len(elems); i++ {
		before := len(b)
		// The library numbers elements from 1 over the whole list, not
		// per message, in 16 bits; the kernel ignores the number.
		b = appendElement(b, uint16(i+1), s, &elems[i])
		if i > first && len(b)-list-nlaHeaderLen > maxElemBytes {
			b = b[:before]
			break
		}
	}
	binary.NativeEndian.PutUint16(b[list:], uint16(len(b)-list))
	w.add(b)
	return i
}

// appendElement appends one element as a nested attribute of type num.
func appendElement(b []byte, num uint16, s *nft.Set, e *nft.Element) []byte {
	start := len(b)
	b = appendAttr(b, unix.NLA_F_NESTED|num, nil)
	b = appendDataValue(b, unix.NFTA_SET_ELEM_KEY, s.Key, e.Key, false)
	if s.Interval {
		b = appendDataValue(b, nftables.NFTA_SET_ELEM_KEY_END, s.Key, e.Key, true)
	}
	switch {
	case s.Map && len(s.Data) > 0:
		b = appendDataValue(b, unix.NFTA_SET_ELEM_DATA, s.Data, e.Data, false)
	case s.Map:
		b = appendVerdictData(b, e.Verdict)
	}
	if e.Comment != "" { // kept by the kernel as the element's userdata, as nft writes it
		b = appendAttr(b, unix.NFTA_SET_ELEM_USERDATA, userdata.AppendString(nil, userdata.NFTNL_UDATA_SET_ELEM_COMMENT, e.Comment))
	}
	binary.NativeEndian.PutUint16(b[start:], uint16(len(b)-start))
	return b
}

// appendDataValue appends attribute typ holding NFTA_DATA_VALUE: the key
// (or with end, the last key of an interval element), as encodeKey and
// encodeKeyEnd write it.
func appendDataValue(b []byte, typ uint16, types []nft.DataType, key []nft.Value, end bool) []byte {
	outer := len(b)
	b = appendAttr(b, unix.NLA_F_NESTED|typ, nil)
	inner := len(b)
	b = appendAttr(b, unix.NFTA_DATA_VALUE, nil)
	for i, t := range types {
		b = appendKeyPart(b, t, key[i], end, len(types) > 1)
	}
	binary.NativeEndian.PutUint16(b[inner:], uint16(len(b)-inner))
	b = pad4(b)
	binary.NativeEndian.PutUint16(b[outer:], uint16(len(b)-outer))
	return b
}

// appendKeyPart appends one part of a key, padded to whole 32-bit words in
// a concatenation.
func appendKeyPart(b []byte, t nft.DataType, v nft.Value, end, concat bool) []byte {
	start := len(b)
	switch t {
	case nft.TypeInetProto:
		b = append(b, byte(v.Num))
	case nft.TypeInetService:
		b = binary.BigEndian.AppendUint16(b, uint16(v.Num))
	case nft.TypeInteger:
		b = binary.NativeEndian.AppendUint32(b, v.Num) // as numgen draws it
	default:
		b = appendKeyAddr(b, v, end)
	}
	if concat {
		for (len(b)-start)%4 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

// appendKeyAddr appends an address part: a prefix's first address, or with
// end its last.
func appendKeyAddr(b []byte, v nft.Value, end bool) []byte {
	a := v.Addr
	if v.Prefix.IsValid() {
		a = v.Prefix.Masked().Addr()
		if end {
			a = lastAddr(v.Prefix)
		}
	}
	return appendAddrBytes(b, a)
}

func appendAddrBytes(b []byte, a netip.Addr) []byte {
	switch {
	case a.Is4():
		a4 := a.As4()
		return append(b, a4[:]...)
	case a.IsValid():
		a16 := a.As16()
		return append(b, a16[:]...)
	}
	return b
}

// appendVerdictData appends a verdict map element's data: NFTA_DATA_VERDICT
// holding the code and, for jump and goto, the chain.
func appendVerdictData(b []byte, v nft.Verdict) []byte {
	outer := len(b)
	b = appendAttr(b, unix.NLA_F_NESTED|unix.NFTA_SET_ELEM_DATA, nil)
	inner := len(b)
	b = appendAttr(b, unix.NLA_F_NESTED|unix.NFTA_DATA_VERDICT, nil)
	ev := encodeVerdict(v)
	b = appendAttr(b, unix.NFTA_VERDICT_CODE, binaryutil.BigEndian.PutUint32(uint32(ev.Kind)))
	if ev.Chain != "" {
		b = appendString(b, unix.NFTA_VERDICT_CHAIN, ev.Chain)
	}
	binary.NativeEndian.PutUint16(b[inner:], uint16(len(b)-inner))
	binary.NativeEndian.PutUint16(b[outer:], uint16(len(b)-outer))
	return b
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
