package agent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nftproxy/nftproxy/proxy/kube"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// The informers' caches hold every Service and EndpointSlice of the cluster
// for the agent's lifetime. They keep what the agent reads of them, not the
// API objects: the transform converts each object to the model as it
// arrives (proxy/kube), and the cache, the handlers and the tracker share
// that one model value. The API objects, even trimmed, were the largest
// part of the agent's live heap, beside a model copy of the same data
// (docs/benchmarks.md, Profiling); a cached object is now its model and the
// few fields events need.

// cached is what an informer keeps of a Service (M model.Service) or an
// EndpointSlice (M model.EndpointSlice).
type cached[M any] struct {
	namespace, name string
	uid             types.UID // for events: `kubectl describe` matches on it
	// model is the object converted, nil when it is left out: skipped
	// (proxy/kube's SkipReason) or invalid (err).
	model *M
	err   error
	// trigger is an EndpointSlice's last-change-trigger-time, zero when
	// absent.
	trigger time.Time
}

// GetObjectMeta makes a cached object an object to the informer's store,
// which keys it by namespace and name (meta.Accessor), and to events.
func (c *cached[M]) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: c.namespace, Name: c.name, UID: c.uid}
}

// transform is the informers' transform: Services and EndpointSlices become
// cached values; a Node, of which there is one, and ServiceCIDRs, of which
// there are few, are trimmed. An object that
// is already cached is returned as it is: client-go may pass objects
// through the transform twice (a watch list's store, then the queue).
func transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Service:
		m, err := kube.ConvertService(o)
		return &cached[model.Service]{namespace: o.Namespace, name: o.Name, uid: o.UID, model: m, err: err}, nil
	case *discoveryv1.EndpointSlice:
		m, err := kube.ConvertSlice(o)
		return &cached[model.EndpointSlice]{namespace: o.Namespace, name: o.Name, uid: o.UID, model: m, err: err,
			trigger: triggerTime(o)}, nil
	case *networkingv1.ServiceCIDR:
		o.ManagedFields, o.OwnerReferences, o.Annotations, o.Status = nil, nil, nil, networkingv1.ServiceCIDRStatus{}
	case *corev1.Node:
		trimNode(o)
	}
	return obj, nil
}

// trimNode drops, before the Node is stored in its informer's cache, what
// proxy/kube and /healthz never read: managedFields, annotations, status
// besides addresses (a Node's image list is large).
func trimNode(n *corev1.Node) {
	n.ManagedFields, n.OwnerReferences, n.Annotations = nil, nil, nil
	n.Status = corev1.NodeStatus{Addresses: n.Status.Addresses}
}

// triggerTime reads the EndpointSlice controller's
// endpoints.kubernetes.io/last-change-trigger-time: when the change that
// led to this version (a Pod or Service update) happened. Absent or
// unparsable: zero.
func triggerTime(s *discoveryv1.EndpointSlice) time.Time {
	v, ok := s.Annotations[corev1.EndpointsLastChangeTriggerTime]
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return t
}
