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
	local := localEndpoints(snap, node)
	out := map[uint16]service{}
	for i := range snap.Services {
		svc := &snap.Services[i]
		if !svc.ExternalLocal || svc.HealthCheckNodePort == 0 {
			continue
		}
		if _, taken := out[svc.HealthCheckNodePort]; taken {
			continue
		}
		out[svc.HealthCheckNodePort] = service{svc.Namespace, svc.Name, local[svc.Key()]}
	}
	return out
}

// localEndpoints counts, by Service, the distinct ready endpoint addresses
// on node, over all ports: kube-proxy's LocalReadyEndpoints.
func localEndpoints(snap *model.Snapshot, node string) map[string]int {
	seen := map[string]map[netip.Addr]bool{}
	for _, s := range snap.Slices {
		key := s.Namespace + "/" + s.Service
		for _, ep := range s.Endpoints {
			if !ep.Ready || ep.NodeName != node || len(ep.Addresses) == 0 {
				continue
			}
			if seen[key] == nil {
				seen[key] = map[netip.Addr]bool{}
			}
			seen[key][ep.Addresses[0]] = true
		}
	}
	out := map[string]int{}
	for k, v := range seen {
		out[k] = len(v)
	}
	return out
}
