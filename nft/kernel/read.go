package kernel

import (
	"fmt"

	"github.com/google/nftables"

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
		if nft.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	t := &nft.Table{Family: f, Name: kt.Name}
	counters, err := k.readCounters(kt)
	if err != nil {
		return nil, err
	}
	for _, c := range counters {
		t.Counters = append(t.Counters, nft.Counter{Name: c.Name})
	}
	if err := k.readSets(t, kt); err != nil {
		return nil, err
	}
	if err := k.readChains(t, kt); err != nil {
		return nil, err
	}
	return t, nil
}

func (k *Kernel) readSets(t *nft.Table, kt *nftables.Table) error {
	sets, err := getSets(k.conn, kt)
	if err != nil {
		return fmt.Errorf("list sets: %w", err)
	}
	uds, err := k.setUserdata(kt)
	if err != nil {
		return fmt.Errorf("list sets: %w", err)
	}
	for _, ks := range sets {
		s := decodeSet(t.Family, ks, uds[ks.Name])
		if s.Dynamic {
			// Filled by the packet path: its elements are not ours to diff.
			t.Sets = append(t.Sets, s)
			continue
		}
		if err := k.readSetElements(s, ks); err != nil {
			return fmt.Errorf("list elements of %s: %w", ks.Name, err)
		}
		s.SortElements()
		t.Sets = append(t.Sets, s)
	}
	return nil
}

func (k *Kernel) readChains(t *nft.Table, kt *nftables.Table) error {
	chains, err := listChains(k.conn, kt.Family)
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

// readSetElements reads the elements of set ks into s. A range set's
// elements come back as starts and ends, paired once all are read; a range
// that is no prefix marks the set's key so that it differs from ours and
// the next sync replaces the table (a patch could not delete that range).
func (k *Kernel) readSetElements(s *nft.Set, ks *nftables.Set) error {
	if !isRangeSet(s) {
		return k.readElements(ks, func(e nftables.SetElement) {
			s.Elements = append(s.Elements, decodeElement(s, e))
		}, func() { s.Elements = s.Elements[:0] })
	}
	var raw []nftables.SetElement
	err := k.readElements(ks, func(e nftables.SetElement) { raw = append(raw, e) }, func() { raw = raw[:0] })
	elems, ok := decodeRanges(raw)
	s.Elements = elems
	if !ok {
		s.Key = append(s.Key, "range that is not a prefix")
	}
	return err
}
