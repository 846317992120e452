package config

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
)

// The helpers in this file turn strings into parsed values so that callers do
// not parse them again. They assume c passed Validate: what does not parse is
// skipped, not reported.

// ClusterCIDRs returns the CIDRs of ClusterCIDR, masked, in file order (at
// most one per IP family), or nil when it is empty.
func (c *Configuration) ClusterCIDRs() []netip.Prefix {
	if c.ClusterCIDR == "" {
		return nil
	}
	var out []netip.Prefix
	for _, s := range strings.Split(c.ClusterCIDR, ",") {
		if p, err := parseCIDR(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// NodePortCIDRs returns the CIDRs NodePorts are served on, masked, or nil
// when NodePortAddresses means the node's primary IPs (empty, or the single
// value "primary"); the caller then takes them from the Node object.
// "all" expands to 0.0.0.0/0 and ::/0.
func (c *Configuration) NodePortCIDRs() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.NodePortAddresses {
		switch s {
		case NodePortAddressesPrimary:
			return nil
		case NodePortAddressesAll:
			out = append(out, netip.PrefixFrom(netip.IPv4Unspecified(), 0),
				netip.PrefixFrom(netip.IPv6Unspecified(), 0))
		default:
			if p, err := parseCIDR(s); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// NodeName returns the name of this node's Node object: HostnameOverride if
// set, else the hostname, trimmed and lowercased as kube-proxy does (Node
// names are lowercase; hostnames need not be).
func (c *Configuration) NodeName() (string, error) {
	name := c.HostnameOverride
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("get hostname: %w", err)
		}
		name = h
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return "", errors.New("empty node name: set hostnameOverride")
	}
	return name, nil
}

// parseCIDR parses one CIDR, tolerating surrounding spaces (comma-separated
// lists are often written "a, b") and host bits ("10.0.0.1/8"), which
// kube-proxy's sloppy parser also accepts; the result is masked.
func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, err
	}
	return p.Masked(), nil
}
