package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// externalLocal reports externalTrafficPolicy: Local. As in kube-proxy, the
// policy only counts for a Service reachable from outside (node ports, load
// balancer or external IPs); the API server defaults it even where it is
// meaningless.
func externalLocal(svc *model.Service, p corev1.ServiceExternalTrafficPolicy, errs *fieldErrors) bool {
	switch p {
	case "", corev1.ServiceExternalTrafficPolicyCluster:
		return false
	case corev1.ServiceExternalTrafficPolicyLocal:
		return hasNodePorts(svc.Type) || len(svc.ExternalIPs) > 0
	}
	errs.add("spec.externalTrafficPolicy", "unsupported policy %q", p)
	return false
}

// internalLocal reports internalTrafficPolicy: Local.
func internalLocal(p *corev1.ServiceInternalTrafficPolicy, errs *fieldErrors) bool {
	if p == nil {
		return false
	}
	switch *p {
	case "", corev1.ServiceInternalTrafficPolicyCluster:
		return false
	case corev1.ServiceInternalTrafficPolicyLocal:
		return true
	}
	errs.add("spec.internalTrafficPolicy", "unsupported policy %q", *p)
	return false
}

// affinitySeconds returns the ClientIP affinity timeout, 0 without affinity.
func affinitySeconds(spec *corev1.ServiceSpec, errs *fieldErrors) int32 {
	switch spec.SessionAffinity {
	case "", corev1.ServiceAffinityNone:
		return 0
	case corev1.ServiceAffinityClientIP:
	default:
		errs.add("spec.sessionAffinity", "unsupported session affinity %q", spec.SessionAffinity)
		return 0
	}
	timeout := corev1.DefaultClientIPServiceAffinitySeconds
	if cfg := spec.SessionAffinityConfig; cfg != nil && cfg.ClientIP != nil && cfg.ClientIP.TimeoutSeconds != nil {
		timeout = *cfg.ClientIP.TimeoutSeconds
	}
	if timeout < 1 || timeout > maxAffinitySeconds {
		errs.add("spec.sessionAffinityConfig.clientIP.timeoutSeconds",
			"must be between 1 and %d, got %d", maxAffinitySeconds, timeout)
		return 0
	}
	return timeout
}
