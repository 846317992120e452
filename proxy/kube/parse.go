package kube

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// parseIP parses one address, recording a problem at path when it is not one
// nftproxy can program.
func parseIP(s, path string, errs *fieldErrors) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		errs.add(path, "invalid IP address %q", s)
	case addr.Zone() != "":
		errs.add(path, "IP address %q must not have a zone", s)
	case addr.Is4In6():
		errs.add(path, "IPv4-mapped IPv6 address %q is not allowed", s)
	default:
		return addr, true
	}
	return netip.Addr{}, false
}

// parseIPs parses list, naming each entry path[i]; invalid entries are
// recorded and left out.
func parseIPs(list []string, path string, errs *fieldErrors) []netip.Addr {
	var out []netip.Addr
	for i, s := range list {
		if addr, ok := parseIP(s, index(path, i), errs); ok {
			out = append(out, addr)
		}
	}
	return out
}

// parsePrefix parses a CIDR. With bareIP, an address alone is accepted as a
// single-host prefix, as the API server does for loadBalancerSourceRanges.
// Host bits are cleared rather than rejected: kube-proxy parses with
// net.ParseCIDR, which masks, and objects created before the API server's
// strict CIDR validation may carry them.
func parsePrefix(s, path string, bareIP bool, errs *fieldErrors) (netip.Prefix, bool) {
	if bareIP && !strings.Contains(s, "/") {
		addr, ok := parseIP(s, path, errs)
		return netip.PrefixFrom(addr, addr.BitLen()), ok
	}
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		errs.add(path, "invalid CIDR %q", s)
	case p.Addr().Is4In6():
		errs.add(path, "CIDR %q must not have an IPv4-mapped IPv6 address", s)
	default:
		return p.Masked(), true
	}
	return netip.Prefix{}, false
}

// protocol defaults an empty protocol to TCP, as the API server does.
func protocol(p corev1.Protocol, path string, errs *fieldErrors) model.Protocol {
	switch p {
	case "":
		return model.TCP
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return model.Protocol(p)
	}
	errs.add(path, "unsupported protocol %q", p)
	return ""
}

// portNumber checks v is in min..65535; min is 0 for fields where 0 means
// unset (node ports) and 1 otherwise.
func portNumber(v int32, min int32, path string, errs *fieldErrors) uint16 {
	if v < min || v > 65535 {
		errs.add(path, "must be between %d and 65535, got %d", min, v)
		return 0
	}
	return uint16(v)
}

// family names the address family of addr as an EndpointSlice address type.
func family(addr netip.Addr) model.AddressType {
	if addr.Is4() {
		return model.IPv4
	}
	return model.IPv6
}
