package healthcheck

import (
	"net/netip"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// service is what a health-check server reports.
type service struct {
	namespace, name string
	localEndpoints  int
}

// wanted returns, by health-check node port, the Services of snap that
// need a server on node: externalTrafficPolicy Local with a
// healthCheckNodePort. A port claimed twice goes to the first Service.
func wanted(snap *model.Snapshot, node string) map[uint16]service {
	out := map[uint16]service{}
	for i := range snap.Services {
		svc := &snap.Services[i]
		if !svc.ExternalLocal || svc.HealthCheckNodePort == 0 {
			continue
		}
		if _, taken := out[svc.HealthCheckNodePort]; taken {
			continue
		}
		out[svc.HealthCheckNodePort] = service{svc.Namespace, svc.Name, 0}
	}
	countLocal(snap, node, out)
	return out
}

// countLocal counts, for the Services of out, the distinct ready endpoint
// addresses on node, over all ports: kube-proxy's LocalReadyEndpoints. It
// runs after every sync, so only the slices of those Services are read,
// found without building a key per slice: at 10,000 Services counting
// every Service's endpoints was a tenth of the agent's CPU under churn.
func countLocal(snap *model.Snapshot, node string, out map[uint16]service) {
	type nsName struct{ namespace, name string }
	seen := map[nsName]map[netip.Addr]bool{}
	for _, svc := range out {
		seen[nsName{svc.namespace, svc.name}] = map[netip.Addr]bool{}
	}
	if len(seen) == 0 {
		return
	}
	for i := range snap.Slices {
		s := &snap.Slices[i]
		addrs, ok := seen[nsName{s.Namespace, s.Service}]
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Ready && ep.NodeName == node && len(ep.Addresses) > 0 {
				addrs[ep.Addresses[0]] = true
			}
		}
	}
	for port, svc := range out {
		svc.localEndpoints = len(seen[nsName{svc.namespace, svc.name}])
		out[port] = svc
	}
}
