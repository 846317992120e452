package explain

import (
	"net/netip"
	"slices"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Cluster is what manifests or the API server say about the cluster: it
// names each endpoint's node and conditions, which the table does not
// record, and tells externalIPs from load-balancer IPs.
type Cluster struct {
	Snapshot *model.Snapshot
	Node     string // this node's name
}

func (c *Cluster) service(ns, name string) *model.Service {
	if c == nil || c.Snapshot == nil {
		return nil
	}
	for i := range c.Snapshot.Services {
		if s := &c.Snapshot.Services[i]; s.Namespace == ns && s.Name == name {
			return s
		}
	}
	return nil
}

// endpoint returns the endpoint of Service ns/name at addr.
func (c *Cluster) endpoint(ns, name string, addr netip.Addr) (model.Endpoint, bool) {
	if c == nil || c.Snapshot == nil {
		return model.Endpoint{}, false
	}
	for _, s := range c.Snapshot.Slices {
		if s.Namespace != ns || s.Service != name {
			continue
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) > 0 && ep.Addresses[0] == addr {
				return ep, true
			}
		}
	}
	return model.Endpoint{}, false
}

// refine names an entry exactly when the Service is known.
func (c *Cluster) refine(sp *ServicePort, dst netip.Addr) {
	svc := c.service(sp.Namespace, sp.Name)
	if svc == nil || sp.Entry == "NodePort" || sp.Entry == "ClusterIP" {
		return
	}
	switch {
	case slices.Contains(svc.ExternalIPs, dst):
		sp.Entry = "externalIP"
	case slices.Contains(svc.LoadBalancerIPs, dst):
		sp.Entry = "load-balancer IP"
	}
}

// describe fills in what the cluster says about endpoint ep of sp.
func (c *Cluster) describe(sp *ServicePort, ep *Endpoint, addr netip.Addr) {
	if sp == nil {
		return
	}
	e, ok := c.endpoint(sp.Namespace, sp.Name, addr)
	if !ok {
		return
	}
	// Known, even when the EndpointSlice names no node: then nobody knows.
	ep.Node, ep.NodeKnown, ep.Local = e.NodeName, true, e.NodeName != "" && e.NodeName == c.Node
	for _, cond := range []struct {
		on   bool
		name string
	}{{e.Ready, "ready"}, {e.Serving, "serving"}, {e.Terminating, "terminating"}} {
		if cond.on {
			ep.Conditions = append(ep.Conditions, cond.name)
		}
	}
}
