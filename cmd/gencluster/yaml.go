package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// writeService writes svc as a v1 Service manifest. It writes the fields
// the synthetic clusters set, no others.
func writeService(w io.Writer, svc *model.Service) {
	fmt.Fprintf(w, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec:\n", svc.Name, svc.Namespace)
	fmt.Fprintf(w, "  type: %s\n  clusterIP: %s\n  clusterIPs: [%s]\n", svc.Type, svc.ClusterIPs[0], svc.ClusterIPs[0])
	if svc.ExternalLocal {
		fmt.Fprintf(w, "  externalTrafficPolicy: Local\n  healthCheckNodePort: %d\n", svc.HealthCheckNodePort)
	}
	if svc.AffinitySeconds > 0 {
		fmt.Fprintf(w, "  sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: %d}}\n", svc.AffinitySeconds)
	}
	fmt.Fprint(w, "  ports:\n")
	for _, p := range svc.Ports {
		nodePort := ""
		if p.NodePort != 0 {
			nodePort = fmt.Sprintf(", nodePort: %d", p.NodePort)
		}
		fmt.Fprintf(w, "  - {name: %s, protocol: %s, port: %d, targetPort: %d%s}\n", p.Name, p.Protocol, p.Port, synth.TargetPort(p), nodePort)
	}
	if len(svc.LoadBalancerIPs) > 0 {
		ips := make([]string, len(svc.LoadBalancerIPs))
		for i, ip := range svc.LoadBalancerIPs {
			ips[i] = fmt.Sprintf("{ip: %s}", ip)
		}
		fmt.Fprintf(w, "status:\n  loadBalancer: {ingress: [%s]}\n", strings.Join(ips, ", "))
	}
}

// writeSlice writes s as a discovery.k8s.io/v1 EndpointSlice manifest.
func writeSlice(w io.Writer, s *model.EndpointSlice) {
	fmt.Fprintf(w, "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s\n  namespace: %s\n", s.Name, s.Namespace)
	fmt.Fprintf(w, "  labels: {kubernetes.io/service-name: %s}\naddressType: %s\nports:\n", s.Service, s.AddressType)
	for _, p := range s.Ports {
		fmt.Fprintf(w, "- {name: %s, protocol: %s, port: %d}\n", p.Name, p.Protocol, p.Port)
	}
	fmt.Fprint(w, "endpoints:\n")
	for _, ep := range s.Endpoints {
		fmt.Fprintf(w, "- addresses: [%s]\n  conditions: {ready: %t, serving: %t}\n", ep.Addresses[0], ep.Ready, ep.Serving)
		if ep.NodeName != "" {
			fmt.Fprintf(w, "  nodeName: %s\n", ep.NodeName)
		}
	}
}
