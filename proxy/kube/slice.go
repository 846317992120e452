package kube

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// SliceSkipReason returns why s is not for nftproxy to program, or "" when
// it is. ConvertSlice returns (nil, nil) exactly when this is not "".
func SliceSkipReason(s *discoveryv1.EndpointSlice) string {
	if s.AddressType == discoveryv1.AddressTypeFQDN {
		return "addressType FQDN"
	}
	if s.Labels[discoveryv1.LabelServiceName] == "" {
		return "no " + discoveryv1.LabelServiceName + " label"
	}
	// The EndpointSlice controller copies these labels from the Service;
	// kube-proxy's informers filter on them.
	if v, ok := s.Labels[LabelServiceProxyName]; ok {
		return "labelled " + LabelServiceProxyName + "=" + v
	}
	if _, ok := s.Labels[corev1.IsHeadlessService]; ok {
		return "labelled " + corev1.IsHeadlessService
	}
	return ""
}

// ConvertSlice validates s and converts it. It returns (nil, nil) when
// SliceSkipReason is not empty, and an *ObjectError listing every problem
// when s is invalid.
func ConvertSlice(s *discoveryv1.EndpointSlice) (*model.EndpointSlice, error) {
	if SliceSkipReason(s) != "" {
		return nil, nil
	}
	var errs fieldErrors
	if s.Name == "" {
		errs.add("metadata.name", "must not be empty")
	}
	out := &model.EndpointSlice{
		Namespace:   s.Namespace,
		Name:        s.Name,
		Service:     s.Labels[discoveryv1.LabelServiceName],
		AddressType: addressType(s.AddressType, &errs),
		Ports:       slicePorts(s.Ports, &errs),
	}
	// Exact sizes: the informer's cache keeps this value for as long as
	// the slice exists (100,000 endpoints at 10,000 x 10).
	out.Endpoints = make([]model.Endpoint, 0, len(s.Endpoints))
	for i, ep := range s.Endpoints {
		out.Endpoints = append(out.Endpoints, endpoint(ep, out.AddressType, index("endpoints", i), &errs))
	}
	if err := errs.err("EndpointSlice", &s.ObjectMeta); err != nil {
		return nil, err
	}
	return out, nil
}

// addressType returns "" for an unsupported type after recording it, which
// turns off the per-address family check below.
func addressType(t discoveryv1.AddressType, errs *fieldErrors) model.AddressType {
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		return model.AddressType(t)
	}
	errs.add("addressType", "unsupported address type %q", t)
	return ""
}

// slicePorts converts ports. An entry without a port number is dropped, as
// kube-proxy does: it means "all ports", which no Service port can use.
func slicePorts(ports []discoveryv1.EndpointPort, errs *fieldErrors) []model.EndpointPort {
	var out []model.EndpointPort
	names := map[string]int{}
	for i, p := range ports {
		path := index("ports", i)
		ep := model.EndpointPort{Protocol: protocol(deref(p.Protocol, ""), path+".protocol", errs)}
		ep.Name = deref(p.Name, "")
		if j, dup := names[ep.Name]; dup {
			errs.add(path+".name", "duplicate name %q (also ports[%d])", ep.Name, j)
		}
		names[ep.Name] = i
		if p.Port == nil {
			continue
		}
		ep.Port = portNumber(*p.Port, 1, path+".port", errs)
		out = append(out, ep)
	}
	return out
}

// endpoint converts one endpoint. Nil conditions take the defaults the API
// documents: ready unless told otherwise, serving as ready, not terminating.
func endpoint(ep discoveryv1.Endpoint, want model.AddressType, path string, errs *fieldErrors) model.Endpoint {
	ready := deref(ep.Conditions.Ready, true)
	out := model.Endpoint{
		Addresses:   endpointAddresses(ep.Addresses, want, path+".addresses", errs),
		Ready:       ready,
		Serving:     deref(ep.Conditions.Serving, ready),
		Terminating: deref(ep.Conditions.Terminating, false),
		NodeName:    deref(ep.NodeName, ""),
		Zone:        deref(ep.Zone, ""),
	}
	if h := ep.Hints; h != nil {
		for _, z := range h.ForZones {
			out.HintZones = append(out.HintZones, z.Name)
		}
		for _, n := range h.ForNodes {
			out.HintNodes = append(out.HintNodes, n.Name)
		}
	}
	return out
}

// endpointAddresses parses addresses and checks each is of the slice's
// family; want is "" when the slice's own address type was invalid.
func endpointAddresses(list []string, want model.AddressType, path string, errs *fieldErrors) []netip.Addr {
	if len(list) == 0 {
		errs.add(path, "must not be empty")
		return nil
	}
	out := make([]netip.Addr, 0, len(list))
	for i, s := range list {
		p := index(path, i)
		addr, ok := parseIP(s, p, errs)
		if !ok {
			continue
		}
		if want != "" && family(addr) != want {
			errs.add(p, "%s address %q in an %s slice", family(addr), s, want)
			continue
		}
		out = append(out, addr)
	}
	return out
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
