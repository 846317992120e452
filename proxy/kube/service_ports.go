package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// portKey identifies a port for duplicate detection.
type portKey struct {
	port  uint16
	proto model.Protocol
}

// servicePorts converts spec.ports. Node ports are kept only when the
// Service type allocates them; the API server clears them otherwise, but a
// hand-written manifest may not.
func servicePorts(ports []corev1.ServicePort, nodePorts bool, errs *fieldErrors) []model.ServicePort {
	var out []model.ServicePort
	names := map[string]int{}
	seen := map[portKey]int{}
	seenNode := map[portKey]int{}
	for i, p := range ports {
		path := index("spec.ports", i)
		sp := model.ServicePort{
			Name:     p.Name,
			Protocol: protocol(p.Protocol, path+".protocol", errs),
			Port:     portNumber(p.Port, 1, path+".port", errs),
		}
		np := portNumber(p.NodePort, 0, path+".nodePort", errs)
		if nodePorts {
			sp.NodePort = np
		}
		checkDuplicateName(names, p.Name, i, path+".name", errs)
		if sp.Protocol != "" && sp.Port != 0 {
			checkDuplicate(seen, portKey{sp.Port, sp.Protocol}, i, path, "port", errs)
		}
		if sp.Protocol != "" && sp.NodePort != 0 {
			checkDuplicate(seenNode, portKey{sp.NodePort, sp.Protocol}, i, path+".nodePort", "node port", errs)
		}
		out = append(out, sp)
	}
	return out
}

// checkDuplicateName enforces unique port names: EndpointSlice ports are
// matched to Service ports by name, so a repeated name is ambiguous.
func checkDuplicateName(seen map[string]int, name string, i int, path string, errs *fieldErrors) {
	j, dup := seen[name]
	switch {
	case !dup:
		seen[name] = i
	case name == "":
		errs.add(path, "must be set when a Service has several ports (spec.ports[%d] is unnamed too)", j)
	default:
		errs.add(path, "duplicate name %q (also spec.ports[%d])", name, j)
	}
}

func checkDuplicate(seen map[portKey]int, k portKey, i int, path, what string, errs *fieldErrors) {
	if j, dup := seen[k]; dup {
		errs.add(path, "duplicate %s %d/%s (also spec.ports[%d])", what, k.port, k.proto, j)
		return
	}
	seen[k] = i
}
