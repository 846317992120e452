package explain

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/trace"
)

// Origin is where a packet comes from, as far as the table cares.
type Origin string

// The origins: a Pod (a source in the cluster CIDRs), the node itself, or
// anything else.
const (
	Pod      Origin = "pod"
	Node     Origin = "node"
	External Origin = "external"
)

// ParseOrigin reads "pod", "node" or "external".
func ParseOrigin(s string) (Origin, bool) {
	switch o := Origin(strings.ToLower(s)); o {
	case Pod, Node, External:
		return o, true
	}
	return "", false
}

func (o Origin) path() trace.Path {
	if o == Node {
		return trace.FromHost
	}
	return trace.FromNetwork
}

// clusterCIDRs are the source ranges the table treats as Pods: those
// exempt from masquerading in mark-non-cluster-for-masquerade, and those
// short-circuited under externalTrafficPolicy: Local. Empty when the node
// was configured without a cluster CIDR.
func clusterCIDRs(t *nft.Table) []netip.Prefix {
	var out []netip.Prefix
	add := func(r nft.Rule) {
		if len(r.Stmts) == 2 {
			if m, ok := r.Stmts[0].(nft.MatchAddr); ok && m.Field == nft.Saddr && !m.Neg && !slices.Contains(out, m.Prefix) {
				out = append(out, m.Prefix)
			}
		}
	}
	if c := t.Chain(nft.ChainMarkNonCluster); c != nil {
		for _, r := range c.Rules {
			add(r)
		}
	}
	for _, name := range []string{nft.ChainExternalLocal, nft.ChainNodePortLocal} {
		if c := t.Chain(name); c != nil {
			for _, r := range c.Rules {
				if r.Comment == commentPodShortcut {
					add(r)
				}
			}
		}
	}
	return out
}

// world is what is known about the node and the cluster while explaining.
type world struct {
	table *nft.Table
	local []netip.Addr   // the node's addresses
	cidrs []netip.Prefix // the cluster CIDRs of the table's family
}

// global are the node's addresses that a Service client would use: not
// loopback, not link-local.
func (w world) global() []netip.Addr {
	var out []netip.Addr
	for _, a := range w.local {
		if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			out = append(out, a)
		}
	}
	return out
}

func (w world) isLocal(a netip.Addr) bool { return a.IsLoopback() || slices.Contains(w.local, a) }

func (w world) inCluster(a netip.Addr) (netip.Prefix, bool) {
	for _, p := range w.cidrs {
		if p.Contains(a) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// infer says where a packet from src comes from.
func (w world) infer(src netip.Addr) From {
	if w.isLocal(src) {
		return From{Origin: string(Node), Assumed: true, Why: fmt.Sprintf("%s is an address of this node", src)}
	}
	if p, ok := w.inCluster(src); ok {
		return From{Origin: string(Pod), Assumed: true, Why: fmt.Sprintf("%s is in the cluster CIDR %s", src, p)}
	}
	why := fmt.Sprintf("%s is not an address of this node", src)
	if len(w.cidrs) > 0 {
		why += fmt.Sprintf(" and not in the cluster CIDRs (%s)", prefixesText(w.cidrs))
	} else {
		why += "; the table knows no cluster CIDR, so Pods and outside clients are treated alike"
	}
	return From{Origin: string(External), Assumed: true, Why: why}
}

// given checks an origin the user named against the source address: the
// node's own traffic needs one of its addresses, since the table tells it
// by `fib saddr type local`.
func (w world) given(o Origin, src netip.Addr) (From, error) {
	inferred := w.infer(src)
	switch {
	case o == Node && !w.isLocal(src):
		return From{}, fmt.Errorf("%s is not an address of this node (%s): traffic from the node has one of its addresses as source",
			src, addrsText(w.global()))
	case o != Node && w.isLocal(src):
		return From{}, fmt.Errorf("%s is an address of this node: traffic from it comes from the node itself", src)
	}
	f := From{Origin: string(o), Why: "given"}
	if string(o) != inferred.Origin {
		f.Why = fmt.Sprintf("given; to the table it is %s traffic: %s", inferred.Origin, inferred.Why)
	}
	return f, nil
}

// externalCandidates are documentation and shared addresses that stand for
// "a client outside the cluster" when none is given.
var externalCandidates = map[nft.Family][]string{
	nft.IPv4: {"203.0.113.99", "192.0.2.99", "198.51.100.99", "100.64.0.99", "172.31.255.99"},
	nft.IPv6: {"2001:db8:ffff::99", "2001:db8:fffe::99", "fd99::99"},
}

// podSkip is how many addresses of a cluster CIDR a typical Pod source
// skips.
const podSkip = 9

// source returns an address that stands for origin o, avoiding the
// addresses avoid rejects (endpoints, which would hairpin; allowed source
// ranges, when a denied client is wanted).
func (w world) source(o Origin, avoid func(netip.Addr) bool) (netip.Addr, error) {
	f := w.table.Family
	switch o {
	case Node:
		for _, a := range w.local {
			if nft.FamilyOf(a) == f && !a.IsLoopback() {
				return a, nil
			}
		}
		return netip.Addr{}, fmt.Errorf("no %s address of this node is known", familyWord(f))
	case Pod:
		for _, p := range w.cidrs {
			a := p.Masked().Addr()
			for range podSkip {
				a = a.Next() // low addresses are often the node's own (a bridge, a gateway)
			}
			for range 256 {
				if a = a.Next(); !a.IsValid() || !p.Contains(a) {
					break
				}
				if !avoid(a) && !w.isLocal(a) {
					return a, nil
				}
			}
		}
		return netip.Addr{}, fmt.Errorf("the table knows no %s cluster CIDR to take a Pod address from", familyWord(f))
	}
	for _, s := range externalCandidates[f] {
		a := netip.MustParseAddr(s)
		if _, pod := w.inCluster(a); !pod && !w.isLocal(a) && !avoid(a) {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("no address outside the cluster found to trace from: pass --src")
}

func familyWord(f nft.Family) string {
	if f == nft.IPv6 {
		return "IPv6"
	}
	return "IPv4"
}

func prefixesText(ps []netip.Prefix) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}

func addrsText(as []netip.Addr) string {
	if len(as) == 0 {
		return "none known"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}
