package agent

import (
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nftproxy/nftproxy/proxy/kube"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestTransformKeepsWhatIsRead: the informers cache a Service or an
// EndpointSlice as exactly what proxy/kube converts it to, keyed as the
// object was, with its UID and the slice's trigger time; an invalid object
// keeps its error; a cached object passes through the transform again
// unchanged; a trimmed Node converts as the original did and loses its
// bulky fields.
func TestTransformKeepsWhatIsRead(t *testing.T) {
	bulky := metav1.ObjectMeta{
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
		Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}", corev1.EndpointsLastChangeTriggerTime: "2026-01-01T00:00:00Z"},
	}
	svc := service("web", func(s *corev1.Service) {
		s.ObjectMeta = *bulky.DeepCopy()
		s.Name, s.Namespace, s.UID, s.Labels = "web", "default", "uid-svc", map[string]string{"app": "web"}
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = 30080
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	})
	sl := slice("web-1", "web", "10.0.1.1")
	sl.ObjectMeta.Annotations, sl.UID = bulky.DeepCopy().Annotations, "uid-slice"
	sl.Endpoints[0].TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: "web-abc"}
	sl.Endpoints[0].NodeName, sl.Endpoints[0].Zone = ptr("node-1"), ptr("a")
	n := node(func(n *corev1.Node) {
		n.Status.Images = []corev1.ContainerImage{{Names: []string{"big"}}}
		n.Spec.Taints = []corev1.Taint{{Key: "k"}}
	})
	bad := service("bad", func(s *corev1.Service) { s.Spec.ClusterIP = "not-an-ip" })

	wantSvc, _ := kube.ConvertService(svc)
	wantSlice, _ := kube.ConvertSlice(sl)
	wantNode, _ := kube.ConvertNode(n)
	gotSvc := transformed[model.Service](t, svc, "default/web", "uid-svc")
	gotSlice := transformed[model.EndpointSlice](t, sl, sl.Namespace+"/web-1", "uid-slice")
	gotBad := transformed[model.Service](t, bad, bad.Namespace+"/bad", string(bad.UID))
	_, _ = transform(n)
	gotNode, _ := kube.ConvertNode(n)
	for _, d := range []string{cmp.Diff(wantSvc, gotSvc.model, cmpAddr), cmp.Diff(wantSlice, gotSlice.model, cmpAddr), cmp.Diff(wantNode, gotNode, cmpAddr)} {
		if d != "" {
			t.Errorf("conversion changed by the transform (-want +got):\n%s", d)
		}
	}
	if want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); !gotSlice.trigger.Equal(want) {
		t.Errorf("trigger time %v, want %v", gotSlice.trigger, want)
	}
	if gotBad.model != nil || gotBad.err == nil {
		t.Errorf("invalid Service cached as %+v, want its error and no model", gotBad)
	}
	if n.Status.Images != nil || n.Annotations != nil || len(n.Spec.Taints) != 1 {
		t.Errorf("Node trim left bulky fields or dropped taints: %+v", n)
	}
}

// transformed runs obj through the transform, checks the cached value's
// key and UID, and that a second pass returns it unchanged.
func transformed[M any](t *testing.T, obj any, key, uid string) *cached[M] {
	t.Helper()
	out, err := transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := out.(*cached[M])
	if !ok {
		t.Fatalf("transform gave %T", out)
	}
	if got, err := cache.MetaNamespaceKeyFunc(c); err != nil || got != key {
		t.Errorf("key %q (%v), want %q", got, err, key)
	}
	if got := c.GetObjectMeta().GetUID(); string(got) != uid {
		t.Errorf("UID %q, want %q", got, uid)
	}
	if again, _ := transform(c); again != any(c) {
		t.Errorf("second transform gave %v, want the cached value unchanged", again)
	}
	return c
}

// cmpAddr compares netip values by ==.
var cmpAddr = cmpopts.EquateComparable(netip.Addr{}, netip.Prefix{})
