package kube

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// LabelServiceProxyName marks objects handled by an alternative proxy; like
// kube-proxy, nftproxy ignores them whatever the value.
const LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// maxAffinitySeconds is the API server's upper bound for
// sessionAffinityConfig.clientIP.timeoutSeconds (one day).
const maxAffinitySeconds = 86400

// ServiceSkipReason returns why svc is not for nftproxy to program, or ""
// when it is. ConvertService returns (nil, nil) exactly when this is not "".
func ServiceSkipReason(svc *corev1.Service) string {
	if v, ok := svc.Labels[LabelServiceProxyName]; ok {
		return "labelled " + LabelServiceProxyName + "=" + v
	}
	// kube-proxy's informers filter this label out of Services as well as
	// EndpointSlices, so we do too.
	if _, ok := svc.Labels[corev1.IsHeadlessService]; ok {
		return "labelled " + corev1.IsHeadlessService
	}
	spec := &svc.Spec
	switch {
	case spec.Type == corev1.ServiceTypeExternalName:
		return "type ExternalName"
	case spec.ClusterIP == corev1.ClusterIPNone,
		len(spec.ClusterIPs) > 0 && spec.ClusterIPs[0] == corev1.ClusterIPNone:
		return "headless (clusterIP None)"
	case spec.ClusterIP == "" && len(spec.ClusterIPs) == 0:
		return "no cluster IP allocated"
	}
	return ""
}

// ConvertService validates svc and converts it. It returns (nil, nil) when
// ServiceSkipReason is not empty, and an *ObjectError listing every problem
// when svc is invalid.
func ConvertService(svc *corev1.Service) (*model.Service, error) {
	if ServiceSkipReason(svc) != "" {
		return nil, nil
	}
	var errs fieldErrors
	if svc.Name == "" {
		errs.add("metadata.name", "must not be empty")
	}
	spec := &svc.Spec
	out := &model.Service{
		Namespace:                svc.Namespace,
		Name:                     svc.Name,
		Type:                     serviceType(spec.Type, &errs),
		ClusterIPs:               clusterIPs(spec, &errs),
		ExternalIPs:              parseIPs(spec.ExternalIPs, "spec.externalIPs", &errs),
		LoadBalancerSourceRanges: sourceRanges(spec.LoadBalancerSourceRanges, &errs),
		InternalLocal:            internalLocal(spec.InternalTrafficPolicy, &errs),
		AffinitySeconds:          affinitySeconds(spec, &errs),
		HealthCheckNodePort:      portNumber(spec.HealthCheckNodePort, 0, "spec.healthCheckNodePort", &errs),
		LoadBalancing:            svc.Annotations[model.AnnotationLoadBalancing],
	}
	if spec.TrafficDistribution != nil {
		out.TrafficDistribution = *spec.TrafficDistribution
	}
	out.LoadBalancerIPs = loadBalancerIPs(svc, out.Type, &errs)
	out.Ports = servicePorts(spec.Ports, hasNodePorts(out.Type), &errs)
	out.ExternalLocal = externalLocal(out, spec.ExternalTrafficPolicy, &errs)
	if err := errs.err("Service", &svc.ObjectMeta); err != nil {
		return nil, err
	}
	return out, nil
}

// serviceType defaults an empty type to ClusterIP, as the API server does.
// ExternalName never gets here: ServiceSkipReason filters it.
func serviceType(t corev1.ServiceType, errs *fieldErrors) model.ServiceType {
	switch t {
	case "":
		return model.ClusterIP
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		return model.ServiceType(t)
	}
	errs.add("spec.type", "unsupported type %q", t)
	return ""
}

func hasNodePorts(t model.ServiceType) bool {
	return t == model.NodePort || t == model.LoadBalancer
}

// clusterIPs reads spec.clusterIPs, falling back to the older single-valued
// spec.clusterIP, and checks there is at most one address per family.
func clusterIPs(spec *corev1.ServiceSpec, errs *fieldErrors) []netip.Addr {
	if len(spec.ClusterIPs) == 0 {
		addr, ok := parseIP(spec.ClusterIP, "spec.clusterIP", errs)
		if !ok {
			return nil
		}
		return []netip.Addr{addr}
	}
	if spec.ClusterIP != "" && spec.ClusterIP != spec.ClusterIPs[0] {
		errs.add("spec.clusterIP", "%q does not match spec.clusterIPs[0] %q", spec.ClusterIP, spec.ClusterIPs[0])
	}
	var out []netip.Addr
	firstOfFamily := map[model.AddressType]int{}
	for i, s := range spec.ClusterIPs {
		path := index("spec.clusterIPs", i)
		addr, ok := parseIP(s, path, errs)
		if !ok {
			continue
		}
		if j, dup := firstOfFamily[family(addr)]; dup {
			errs.add(path, "%q has the same IP family as spec.clusterIPs[%d]", s, j)
			continue
		}
		firstOfFamily[family(addr)] = i
		out = append(out, addr)
	}
	return out
}

// loadBalancerIPs returns the ingress IPs traffic arrives on. An ingress in
// Proxy mode delivers traffic with the load balancer's own address as the
// destination, so nftproxy must not capture it (KEP-1860).
func loadBalancerIPs(svc *corev1.Service, t model.ServiceType, errs *fieldErrors) []netip.Addr {
	if t != model.LoadBalancer {
		return nil
	}
	var out []netip.Addr
	for i, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP == "" || (ing.IPMode != nil && *ing.IPMode == corev1.LoadBalancerIPModeProxy) {
			continue
		}
		if addr, ok := parseIP(ing.IP, index("status.loadBalancer.ingress", i)+".ip", errs); ok {
			out = append(out, addr)
		}
	}
	return out
}

// sourceRanges parses spec.loadBalancerSourceRanges; the API server trims
// spaces around entries, so we do too.
func sourceRanges(list []string, errs *fieldErrors) []netip.Prefix {
	var out []netip.Prefix
	for i, s := range list {
		p, ok := parsePrefix(strings.TrimSpace(s), index("spec.loadBalancerSourceRanges", i), true, errs)
		if ok {
			out = append(out, p)
		}
	}
	return out
}
