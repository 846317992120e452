// Package kube converts Kubernetes API objects (core/v1 Service and Node,
// discovery/v1 EndpointSlice, networking/v1 ServiceCIDR) into the value
// types of proxy/model.
//
// # Contract
//
// Each converter validates the whole object and reports every problem at once
// as an *ObjectError, so that one bad Service yields one event listing all its
// faults rather than a fix-one-retry loop. An object that nftproxy must not
// program (headless, ExternalName, owned by another proxy, FQDN slices) is not
// an error: the converter returns (nil, nil), and ServiceSkipReason or
// SliceSkipReason says why.
//
// # Strictness
//
// Addresses are parsed with net/netip, which is stricter than the API server's
// legacy parsing: leading zeros ("010.0.0.1"), zones ("fe80::1%eth0") and
// IPv4-mapped IPv6 addresses ("::ffff:1.2.3.4") are rejected. The last one
// matters most: such an address is IPv6 to the kernel but reads as IPv4 to a
// human, so it can never be programmed into the family the user expects.
package kube
