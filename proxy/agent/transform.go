package agent

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// trim drops, before an object is stored in an informer's cache, every
// field proxy/kube, the events and /healthz never read. The cache holds
// every Service and EndpointSlice of the cluster for the agent's lifetime,
// and these fields are most of their size: managedFields, kubectl's
// last-applied-configuration annotation, endpoints' targetRef, a Node's
// image list. The informer passes freshly decoded objects, so they are
// changed in place.
func trim(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		m.SetOwnerReferences(nil)
	}
	switch o := obj.(type) {
	case *corev1.Service:
		o.Annotations = nil
		o.Status.Conditions = nil
	case *discoveryv1.EndpointSlice:
		o.Annotations = keepTriggerTime(o.Annotations)
		for i := range o.Endpoints {
			ep := &o.Endpoints[i]
			ep.TargetRef, ep.Hostname, ep.DeprecatedTopology = nil, nil, nil
		}
	case *networkingv1.ServiceCIDR:
		o.Annotations, o.Status = nil, networkingv1.ServiceCIDRStatus{}
	case *corev1.Node:
		o.Annotations = nil
		o.Status = corev1.NodeStatus{Addresses: o.Status.Addresses}
	}
	return obj, nil
}

// keepTriggerTime keeps only the annotation behind the network
// programming latency metric.
func keepTriggerTime(a map[string]string) map[string]string {
	v, ok := a[corev1.EndpointsLastChangeTriggerTime]
	if !ok {
		return nil
	}
	return map[string]string{corev1.EndpointsLastChangeTriggerTime: v}
}
