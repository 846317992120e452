package explain

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// entry is one way into a Service port that the table holds: an element
// of one of nft.ServiceIPEntrySets (a Service address and port) or of
// nft.NodePortEntrySets (a NodePort).
type entry struct {
	svc   ServicePort
	set   string
	elem  nft.Element
	proto uint8
	// dst is the address and port a packet takes to reach it: for a
	// NodePort, the first of the node addresses that accept NodePorts
	// (all of them in addrs); invalid when there is none.
	dst   netip.AddrPort
	addrs []netip.Addr
}

func (e entry) nodePort() bool { return slices.Contains(nft.NodePortEntrySets, e.set) }

// entryFor returns the entry a packet to dst over proto reaches, if any.
func entryFor(t *nft.Table, dst netip.AddrPort, proto uint8) (entry, bool) {
	key := []nft.Value{{Addr: dst.Addr()}, {Num: uint32(proto)}, {Num: uint32(dst.Port())}}
	for _, set := range nft.ServiceIPEntrySets {
		if e, ok := find(t, set, key); ok {
			return newEntry(t, set, e), true
		}
	}
	if !contains(t, nft.SetNodePortIPs, dst.Addr()) {
		return entry{}, false
	}
	for _, set := range nft.NodePortEntrySets {
		if e, ok := find(t, set, key[1:]); ok {
			en := newEntry(t, set, e)
			en.dst = dst
			return en, true
		}
	}
	return entry{}, false
}

// newEntry reads element e of set.
func newEntry(t *nft.Table, set string, e nft.Element) entry {
	svc, _ := parseComment(e.Comment)
	en := entry{svc: svc, set: set, elem: e}
	if en.nodePort() {
		en.proto = uint8(e.Key[0].Num)
		en.addrs = nodePortAddrs(t)
		if len(en.addrs) > 0 {
			en.dst = netip.AddrPortFrom(en.addrs[0], uint16(e.Key[1].Num))
		}
	} else {
		en.proto = uint8(e.Key[1].Num)
		en.dst = netip.AddrPortFrom(e.Key[0].Addr, uint16(e.Key[2].Num))
	}
	en.svc.Entry = entryKind(t, en)
	return en
}

// entryKind names how en is reached, as far as the table tells.
func entryKind(t *nft.Table, en entry) string {
	switch {
	case en.nodePort():
		return "NodePort"
	case contains(t, nft.SetClusterIPs, en.dst.Addr()):
		return "ClusterIP"
	}
	if _, ok := find(t, nft.MapFirewallIPs, en.elem.Key); ok {
		return "load-balancer IP" // only load-balancer IPs have source ranges
	}
	return "externalIP or load-balancer IP"
}

func nodePortAddrs(t *nft.Table) []netip.Addr {
	s := t.Set(nft.SetNodePortIPs)
	if s == nil {
		return nil
	}
	var out []netip.Addr
	for _, e := range s.Elements {
		out = append(out, e.Key[0].Addr)
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

// serviceEntries returns every entry of Service ns/name in t, ClusterIPs
// first, then other addresses, then NodePorts, each by port.
func serviceEntries(t *nft.Table, ns, name string) []entry {
	prefix := ns + "/" + name + ":"
	var out []entry
	for _, set := range append(slices.Clone(nft.ServiceIPEntrySets), nft.NodePortEntrySets...) {
		s := t.Set(set)
		if s == nil {
			continue
		}
		for _, e := range s.Elements {
			if strings.HasPrefix(e.Comment, prefix) {
				out = append(out, newEntry(t, set, e))
			}
		}
	}
	slices.SortStableFunc(out, compareEntries)
	return out
}

var entryOrder = map[string]int{"ClusterIP": 0, "externalIP": 1, "load-balancer IP": 2, "externalIP or load-balancer IP": 3, "NodePort": 4}

func compareEntries(a, b entry) int {
	if d := entryOrder[a.svc.Entry] - entryOrder[b.svc.Entry]; d != 0 {
		return d
	}
	if c := strings.Compare(a.svc.Port, b.svc.Port); c != 0 {
		return c
	}
	if c := a.dst.Compare(b.dst); c != 0 {
		return c
	}
	return int(a.proto) - int(b.proto)
}
