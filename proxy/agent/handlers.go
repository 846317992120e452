package agent

import (
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/nftproxy/nftproxy/proxy/kube"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// The handlers below run on informer goroutines. They convert, record and
// kick the runner; they never sync.

// setService records a Service; nil means deleted. An invalid Service gets
// a Warning event and is left out, like a deleted one: its old rules go, and
// every other Service is still programmed.
func (a *Agent) setService(key string, svc *corev1.Service) {
	var m *model.Service
	if svc != nil {
		var err error
		if m, err = kube.ConvertService(svc); err != nil {
			a.logger.V(2).Info("Service not programmed", "service", key, "err", err)
			a.events.Invalid("Service", svc, err)
		} else {
			a.events.Forget("Service", svc.Namespace, svc.Name)
		}
	} else {
		a.forget("Service", key)
	}
	if a.tracker.SetService(key, m) {
		a.changed(a.serviceChange)
	}
}

// setSlice records an EndpointSlice; nil means deleted.
func (a *Agent) setSlice(key string, s *discoveryv1.EndpointSlice) {
	var m *model.EndpointSlice
	var trigger time.Time
	if s != nil {
		var err error
		if m, err = kube.ConvertSlice(s); err != nil {
			a.logger.V(2).Info("EndpointSlice not programmed", "endpointSlice", key, "err", err)
			a.events.Invalid("EndpointSlice", s, err)
		} else {
			a.events.Forget("EndpointSlice", s.Namespace, s.Name)
		}
		trigger = triggerTime(s)
	} else {
		a.forget("EndpointSlice", key)
	}
	if a.tracker.SetSlice(key, m, trigger) {
		a.changed(a.endpointChange)
	}
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

// setServiceCIDR records a ServiceCIDR; nil means deleted. The API
// server validates ServiceCIDRs, so one that does not convert is only
// logged, and left out like a deleted one.
func (a *Agent) setServiceCIDR(key string, sc *networkingv1.ServiceCIDR) {
	var m *model.ServiceCIDR
	if sc != nil {
		var err error
		if m, err = kube.ConvertServiceCIDR(sc); err != nil {
			a.logger.Error(err, "ServiceCIDR not programmed", "serviceCIDR", key)
		}
	}
	if a.tracker.SetServiceCIDR(key, m) {
		a.changed(nil)
	}
}

// setNode records this node's Node; nil means deleted. The node's IPs and
// Pod CIDRs feed the compiler options; its deletion state feeds /healthz.
func (a *Agent) setNode(_ string, n *corev1.Node) {
	if a.cfg.Health != nil {
		a.cfg.Health.SyncNode(n)
	}
	if n == nil {
		return // keep programming with what we knew: the node still runs
	}
	m, err := kube.ConvertNode(n)
	if err != nil {
		a.logger.Error(err, "Node not usable, keeping the previous one", "node", n.Name)
		return
	}
	a.mu.Lock()
	changed := !reflect.DeepEqual(a.node, *m)
	a.node, a.nodeChanged = *m, a.nodeChanged || changed
	a.mu.Unlock()
	if changed {
		a.changed(nil)
	}
}

// changed queues a sync for a recorded change.
func (a *Agent) changed(count func()) {
	if count != nil {
		count()
	}
	a.setPending()
	a.queued()
	a.runner.Kick()
}

func (a *Agent) forget(kind, key string) {
	ns, name, _ := strings.Cut(key, "/")
	a.events.Forget(kind, ns, name)
}

func (a *Agent) serviceChange() {
	if a.cfg.Metrics != nil {
		a.cfg.Metrics.ServiceChangesTotal.Inc()
	}
}

func (a *Agent) endpointChange() {
	if a.cfg.Metrics != nil {
		a.cfg.Metrics.EndpointChangesTotal.Inc()
	}
}
