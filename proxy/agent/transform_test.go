package agent

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/proxy/kube"
)

// TestTrimKeepsWhatIsRead: trimmed objects convert exactly as the originals
// do, and the bulky fields are gone.
func TestTrimKeepsWhatIsRead(t *testing.T) {
	bulky := metav1.ObjectMeta{
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
		Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}", corev1.EndpointsLastChangeTriggerTime: "2026-01-01T00:00:00Z"},
	}
	svc := service("web", func(s *corev1.Service) {
		s.ObjectMeta = *bulky.DeepCopy()
		s.Name, s.Namespace, s.Labels = "web", "default", map[string]string{"app": "web"}
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = 30080
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	})
	sl := slice("web-1", "web", "10.0.1.1")
	sl.ObjectMeta.Annotations = bulky.DeepCopy().Annotations
	sl.Endpoints[0].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: "web-abc"}
	sl.Endpoints[0].NodeName, sl.Endpoints[0].Zone = ptr("node-1"), ptr("a")
	n := node(func(n *corev1.Node) {
		n.Status.Images = []corev1.ContainerImage{{Names: []string{"big"}}}
		n.Spec.Taints = []corev1.Taint{{Key: "k"}}
	})

	wantSvc, _ := kube.ConvertService(svc)
	wantSlice, _ := kube.ConvertSlice(sl)
	wantNode, _ := kube.ConvertNode(n)
	trimAll(svc, sl, n)
	gotSvc, _ := kube.ConvertService(svc)
	gotSlice, _ := kube.ConvertSlice(sl)
	gotNode, _ := kube.ConvertNode(n)
	for _, d := range []string{cmp.Diff(wantSvc, gotSvc, cmpAddr), cmp.Diff(wantSlice, gotSlice, cmpAddr), cmp.Diff(wantNode, gotNode, cmpAddr)} {
		if d != "" {
			t.Errorf("conversion changed by trim (-want +got):\n%s", d)
		}
	}
	if svc.ManagedFields != nil || svc.Annotations != nil || sl.Endpoints[0].TargetRef != nil || n.Status.Images != nil || len(n.Spec.Taints) != 1 {
		t.Errorf("trim left bulky fields or dropped taints: %+v %+v %+v", svc.ObjectMeta, sl.Endpoints[0], n.Status)
	}
	if got := triggerTime(sl); got.IsZero() {
		t.Error("trim dropped the last-change-trigger-time annotation")
	}
}

func trimAll(objs ...any) {
	for _, o := range objs {
		_, _ = trim(o)
	}
}

// cmpAddr compares netip values by ==.
var cmpAddr = cmpopts.EquateComparable(netip.Addr{}, netip.Prefix{})
