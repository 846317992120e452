package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Read returns our tables as the kernel holds them now.
func (k *Kernel) Read() (nft.Ruleset, error) {
	rs := nft.Ruleset{}
	for _, f := range nft.Families {
		t, err := k.readTable(f)
		if err != nil {
			return nil, fmt.Errorf("read table %s %s: %w", f, nft.TableName, err)
		}
		if t != nil {
			rs[f] = t
		}
	}
	return rs, nil
}

func (k *Kernel) readTable(f nft.Family) (*nft.Table, error) {
	kt := tableOf(f)
	if _, err := k.conn.ListTableOfFamily(kt.Name, kt.Family); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, nil
		}
		return nil, err
	}
	t := &nft.Table{Family: f, Name: kt.Name}
	if err := k.readSets(t, kt); err != nil {
		return nil, err
	}
	if err := k.readChains(t, kt); err != nil {
		return nil, err
	}
	return t, nil
}

func (k *Kernel) readSets(t *nft.Table, kt *nftables.Table) error {
	sets, err := k.conn.GetSets(kt)
	if err != nil {
		return fmt.Errorf("list sets: %w", err)
	}
	for _, ks := range sets {
		s := decodeSet(ks)
		if s.Dynamic {
			// Filled by the packet path: its elements are not ours to diff.
			t.Sets = append(t.Sets, s)
			continue
		}
		err := k.readElements(ks, func(e nftables.SetElement) {
			s.Elements = append(s.Elements, decodeElement(s, e))
		})
		if err != nil {
			return fmt.Errorf("list elements of %s: %w", ks.Name, err)
		}
		s.SortElements()
		t.Sets = append(t.Sets, s)
	}
	return nil
}

// keySizes are the unpadded byte lengths of the key types we use.
var keySizes = map[nft.DataType]int{nft.TypeIPv4Addr: 4, nft.TypeIPv6Addr: 16, nft.TypeInetProto: 1, nft.TypeInetService: 2}

// decodeElement reverses encodeKey. A key of a type we do not use decodes
// to zero values, which will not match any desired element.
func decodeElement(s *nft.Set, e nftables.SetElement) nft.Element {
	var out nft.Element
	b := e.Key
	for _, t := range s.Key {
		size := keySizes[t]
		var v nft.Value
		if size == 0 || len(b) < size {
			out.Key = append(out.Key, v)
			continue
		}
		switch t {
		case nft.TypeInetProto:
			v.Num = uint16(b[0])
		case nft.TypeInetService:
			v.Num = binaryutil.BigEndian.Uint16(b[:2])
		default:
			v.Addr = addrFromSlice(b[:size])
		}
		out.Key = append(out.Key, v)
		if len(s.Key) > 1 {
			size = (size + 3) / 4 * 4
		}
		b = b[min(size, len(b)):]
	}
	switch {
	case s.Map && len(s.Data) > 0:
		out.Data = decodeElement(&nft.Set{Key: s.Data}, nftables.SetElement{Key: e.Val}).Key
	case s.Map:
		out.Verdict = decodeVerdictData(e.Val)
	}
	if s.Interval {
		out.Key = toPrefixes(s, out.Key, e.KeyEnd)
	}
	return out
}

// decodeVerdictData decodes a verdict map element's data. google/nftables
// leaves it as the raw NFTA_DATA_VERDICT attributes: a code and, for jump
// and goto, a chain.
func decodeVerdictData(b []byte) nft.Verdict {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nft.Verdict{Kind: -1}
	}
	ad.ByteOrder = binary.BigEndian
	v := nft.Verdict{Kind: -1}
	for ad.Next() {
		switch ad.Type() {
		case unix.NFTA_VERDICT_CODE:
			if kind, ok := verdictsByKind[expr.VerdictKind(int32(ad.Uint32()))]; ok {
				v.Kind = kind
			}
		case unix.NFTA_VERDICT_CHAIN:
			v.Chain = ad.String()
		}
	}
	return v
}

func (k *Kernel) readChains(t *nft.Table, kt *nftables.Table) error {
	chains, err := k.conn.ListChainsOfTableFamily(kt.Family)
	if err != nil {
		return fmt.Errorf("list chains: %w", err)
	}
	var ours []*nftables.Chain
	var names []string
	for _, kc := range chains {
		if kc.Table.Name == kt.Name {
			ours = append(ours, kc)
			names = append(names, kc.Name)
		}
	}
	rules, err := k.readRules(t.Family, names)
	if err != nil {
		return err
	}
	for _, kc := range ours {
		t.Chains = append(t.Chains, &nft.Chain{Name: kc.Name, Base: decodeBase(kc), Rules: rules[kc.Name]})
	}
	return nil
}

func decodeBase(kc *nftables.Chain) *nft.Base {
	if kc.Hooknum == nil || kc.Priority == nil {
		return nil
	}
	for name, h := range hookNums {
		if *h == *kc.Hooknum {
			return &nft.Base{Type: string(kc.Type), Hook: name, Priority: int(*kc.Priority)}
		}
	}
	return &nft.Base{Type: string(kc.Type), Hook: fmt.Sprintf("hook-%d", *kc.Hooknum), Priority: int(*kc.Priority)}
}

// Cleanup deletes our tables in both families, in one transaction.
func (k *Kernel) Cleanup() error {
	for _, f := range nft.Families {
		t := tableOf(f)
		k.conn.AddTable(t)
		k.conn.DelTable(t)
	}
	if err := k.conn.Flush(); err != nil {
		return fmt.Errorf("delete tables: %w", err)
	}
	return nil
}
