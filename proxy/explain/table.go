package explain

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// The rule comments the compiler writes that this package explains.
const (
	commentNoLocal     = "no local endpoints"
	commentSourceRange = "source outside loadBalancerSourceRanges"
	commentWrongPort   = "ClusterIP on a port the Service does not have"
	commentUnallocated = "Address in a ServiceCIDR that no Service holds"
	commentLocalMasq   = "masquerade local traffic"
	commentPodShortcut = "short-circuit pod traffic"
	// commentLocalShortcut is "short-circuit local traffic".
	commentLocalShortcut = "short-circuit local traffic"
)

// find returns the element of the named set whose key is key.
func find(t *nft.Table, set string, key []nft.Value) (nft.Element, bool) {
	s := t.Set(set)
	if s == nil || len(s.Key) != len(key) {
		return nft.Element{}, false
	}
	want := s.KeyText(key)
	for _, e := range s.Elements {
		if len(e.Key) == len(key) && s.KeyText(e.Key) == want {
			return e, true
		}
	}
	return nft.Element{}, false
}

// contains reports whether the set called set holds the one-part key a.
func contains(t *nft.Table, set string, a netip.Addr) bool {
	_, ok := find(t, set, []nft.Value{{Addr: a}})
	return ok
}

// parseComment reads the Service port an entry's comment names:
// "NAMESPACE/NAME:PORT".
func parseComment(c string) (ServicePort, bool) {
	ns, rest, ok1 := strings.Cut(c, "/")
	name, port, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || ns == "" || name == "" || port == "" {
		return ServicePort{}, false
	}
	return ServicePort{Namespace: ns, Name: name, Port: port}, true
}

// ruleText is rule i of chain as nft lists it, "" when there is none.
func ruleText(t *nft.Table, chain string, i int) string {
	if r := rule(t, chain, i); r != nil {
		return r.Text(t.Family)
	}
	return ""
}

func rule(t *nft.Table, chain string, i int) *nft.Rule {
	c := t.Chain(chain)
	if c == nil || i < 0 || i >= len(c.Rules) {
		return nil
	}
	return &c.Rules[i]
}

// ruleComment is the comment of rule i of chain.
func ruleComment(t *nft.Table, chain string, i int) string {
	if r := rule(t, chain, i); r != nil {
		return r.Comment
	}
	return ""
}

// protoName and protoNumber convert between "tcp" and nft's numbers.
func protoName(p uint8) string {
	switch p {
	case nft.ProtoTCP:
		return "tcp"
	case nft.ProtoUDP:
		return "udp"
	case nft.ProtoSCTP:
		return "sctp"
	}
	return strconv.Itoa(int(p))
}

// ProtoNumber returns the protocol number of "tcp", "udp" or "sctp".
func ProtoNumber(name string) (uint8, bool) {
	switch strings.ToLower(name) {
	case "tcp":
		return nft.ProtoTCP, true
	case "udp":
		return nft.ProtoUDP, true
	case "sctp":
		return nft.ProtoSCTP, true
	}
	return 0, false
}
