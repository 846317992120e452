package conntrack

import (
	"maps"
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Target describes conntrack entries to delete: UDP flows to one of Addrs
// on Port, or to any address on NodePort (when not 0), DNATed to Endpoint
// (any destination when Endpoint is not valid).
type Target struct {
	Addrs    []netip.Addr
	Port     uint16
	NodePort uint16
	Endpoint netip.AddrPort
}

// Matches reports whether f is one of the flows t describes.
func (t Target) Matches(f Flow) bool {
	if f.Proto != protoUDP {
		return false
	}
	dst := f.Orig.Dst
	toService := dst.Port() == t.Port && slices.Contains(t.Addrs, dst.Addr())
	toNodePort := t.NodePort != 0 && dst.Port() == t.NodePort
	if !toService && !toNodePort {
		return false
	}
	// The reply comes from where the flow was DNATed to.
	return !t.Endpoint.IsValid() || f.Reply.Src == t.Endpoint
}

// Stale returns the flows to delete after a sync went from prev (nil on the
// first sync) to cur: flows of UDP Service ports DNATed to endpoints that
// are gone, and flows of UDP Service ports that just got their first
// endpoint.
func Stale(prev, cur *model.Snapshot) []Target {
	if prev == nil {
		return nil
	}
	before, after := udpPorts(prev), udpPorts(cur)
	var out []Target
	for _, k := range slices.Sorted(maps.Keys(after)) {
		now, was := after[k], before[k]
		if was == nil {
			continue // a new Service port: nobody has flows to it yet
		}
		if len(was.endpoints) == 0 && len(now.endpoints) > 0 {
			out = append(out, now.target(netip.AddrPort{}))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before)) {
		was, now := before[k], after[k]
		for _, ep := range was.endpoints {
			if now == nil || !slices.Contains(now.endpoints, ep) {
				out = append(out, was.target(ep))
			}
		}
	}
	return out
}

// udpPort is one UDP Service port: where clients send and where it goes.
type udpPort struct {
	addrs     []netip.Addr
	port      uint16
	nodePort  uint16
	endpoints []netip.AddrPort // usable: ready, or serving while terminating
}

func (u *udpPort) target(ep netip.AddrPort) Target {
	return Target{Addrs: u.addrs, Port: u.port, NodePort: u.nodePort, Endpoint: ep}
}

// udpPorts indexes the UDP ports of snap's Services by
// "namespace/name/portname". It runs twice after every sync, so it looks at
// the EndpointSlices of UDP Services only, found without building a key
// per slice: at 10,000 Services that index cost a seventh of the agent's
// CPU under endpoint churn.
func udpPorts(snap *model.Snapshot) map[string]*udpPort {
	type nsName struct{ namespace, name string }
	slices := map[nsName][]*model.EndpointSlice{}
	for i := range snap.Services {
		if svc := &snap.Services[i]; hasUDP(svc) {
			slices[nsName{svc.Namespace, svc.Name}] = nil
		}
	}
	if len(slices) == 0 {
		return map[string]*udpPort{}
	}
	for i := range snap.Slices {
		s := &snap.Slices[i]
		if ss, ok := slices[nsName{s.Namespace, s.Service}]; ok {
			slices[nsName{s.Namespace, s.Service}] = append(ss, s)
		}
	}
	out := map[string]*udpPort{}
	for i := range snap.Services {
		svc := &snap.Services[i]
		if !hasUDP(svc) {
			continue
		}
		addrs := slicesConcat(svc.ClusterIPs, svc.ExternalIPs, svc.LoadBalancerIPs)
		for _, p := range svc.Ports {
			if p.Protocol != model.UDP {
				continue
			}
			u := &udpPort{addrs: addrs, port: p.Port, nodePort: p.NodePort}
			u.endpoints = usable(slices[nsName{svc.Namespace, svc.Name}], p.Name)
			out[svc.Key()+"/"+p.Name] = u
		}
	}
	return out
}

func hasUDP(svc *model.Service) bool {
	for _, p := range svc.Ports {
		if p.Protocol == model.UDP {
			return true
		}
	}
	return false
}

func usable(ss []*model.EndpointSlice, portName string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, s := range ss {
		for _, sp := range s.Ports {
			if sp.Name != portName || sp.Protocol != model.UDP {
				continue
			}
			for _, ep := range s.Endpoints {
				if len(ep.Addresses) > 0 && (ep.Ready || ep.Serving) {
					out = append(out, netip.AddrPortFrom(ep.Addresses[0], sp.Port))
				}
			}
		}
	}
	return out
}

func slicesConcat(parts ...[]netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
