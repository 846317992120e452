package kube

import (
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// nodeAddressOrder lists the address types nftproxy takes node IPs from, in
// the order it lists them: internal addresses first, as kube-proxy prefers
// them for node ports.
var nodeAddressOrder = []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP}

// ConvertNode validates n and converts it, returning an *ObjectError listing
// every problem when n is invalid.
func ConvertNode(n *corev1.Node) (*model.Node, error) {
	var errs fieldErrors
	if n.Name == "" {
		errs.add("metadata.name", "must not be empty")
	}
	out := &model.Node{
		Name:     n.Name,
		IPs:      nodeIPs(n.Status.Addresses, &errs),
		PodCIDRs: podCIDRs(&n.Spec, &errs),
		Labels:   maps.Clone(n.Labels),
	}
	// A Node is cluster-scoped; drop any namespace a manifest may carry so
	// the error names the object as the API server would.
	meta := n.ObjectMeta
	meta.Namespace = ""
	if err := errs.err("Node", &meta); err != nil {
		return nil, err
	}
	return out, nil
}

// nodeIPs returns the InternalIP then ExternalIP addresses, without repeats.
// Other types (Hostname, InternalDNS, ...) are not addresses and are ignored.
func nodeIPs(addrs []corev1.NodeAddress, errs *fieldErrors) []netip.Addr {
	var out []netip.Addr
	for _, t := range nodeAddressOrder {
		for i, a := range addrs {
			if a.Type != t {
				continue
			}
			ip, ok := parseIP(a.Address, index("status.addresses", i)+".address", errs)
			if ok && !slices.Contains(out, ip) {
				out = append(out, ip)
			}
		}
	}
	return out
}

// podCIDRs reads spec.podCIDRs, falling back to the older spec.podCIDR.
func podCIDRs(spec *corev1.NodeSpec, errs *fieldErrors) []netip.Prefix {
	if len(spec.PodCIDRs) == 0 {
		if spec.PodCIDR == "" {
			return nil
		}
		p, ok := parsePrefix(spec.PodCIDR, "spec.podCIDR", false, errs)
		if !ok {
			return nil
		}
		return []netip.Prefix{p}
	}
	var out []netip.Prefix
	for i, s := range spec.PodCIDRs {
		if p, ok := parsePrefix(s, index("spec.podCIDRs", i), false, errs); ok {
			out = append(out, p)
		}
	}
	return out
}
