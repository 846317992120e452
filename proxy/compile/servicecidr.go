package compile

import (
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// serviceCIDRs returns the elements of family f's service-cidrs set: every
// ServiceCIDR's prefixes of that family, sorted, each only once, and none
// that lies inside another (an interval set's elements must not overlap;
// two ServiceCIDRs may nest, e.g. while a range is being widened). Adjacent
// prefixes stay apart, as nft lists them.
func serviceCIDRs(cidrs []model.ServiceCIDR, f nft.Family) []nft.Element {
	var all []netip.Prefix
	for _, sc := range cidrs {
		for _, p := range sc.CIDRs {
			if p.IsValid() && nft.FamilyOf(p.Addr()) == f {
				all = append(all, p.Masked())
			}
		}
	}
	slices.SortFunc(all, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	var out []nft.Element
	var last netip.Prefix
	for _, p := range all {
		// Sorted by first address, widest first: a prefix inside an earlier
		// one is inside the last one kept (prefixes nest or are apart).
		if last.IsValid() && last.Contains(p.Addr()) {
			continue
		}
		last = p
		out = append(out, nft.Element{Key: []nft.Value{{Prefix: p}}})
	}
	return out
}
