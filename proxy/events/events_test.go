package events

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/kube"
)

func svc(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
}

func badPort(name string) error {
	return &kube.ObjectError{Kind: "Service", Namespace: "default", Name: name, Fields: []kube.FieldError{
		{Path: "spec.ports[0].port", Detail: "must be between 1 and 65535, got 0"},
		{Path: "spec.ports[1].protocol", Detail: `unsupported protocol "ICMP"`},
	}}
}

func all(string) bool { return true }

func none(string) bool { return false }

func problem(name, field string) compile.Problem {
	return compile.Problem{Object: "Service default/" + name, Field: field, Detail: "not supported"}
}

func TestReporter(t *testing.T) {
	const invalidWeb = `Warning Invalid not programmed: spec.ports[0].port: must be between 1 and 65535, got 0; spec.ports[1].protocol: unsupported protocol "ICMP"`
	tests := []struct {
		name  string
		steps func(r *Reporter)
		want  []string
	}{
		{name: "invalid: once", steps: func(r *Reporter) {
			r.Invalid("Service", svc("web"), badPort("web"))
			r.Invalid("Service", svc("web"), badPort("web"))
		}, want: []string{invalidWeb}},
		{name: "invalid again after being fixed", steps: func(r *Reporter) {
			r.Invalid("Service", svc("web"), badPort("web"))
			r.Forget("Service", "default", "web")
			r.Invalid("Service", svc("web"), badPort("web"))
		}, want: []string{invalidWeb, invalidWeb}},
		{name: "each object its own", steps: func(r *Reporter) {
			r.Invalid("Service", svc("web"), badPort("web"))
			r.Invalid("Service", svc("api"), badPort("api"))
		}, want: []string{invalidWeb, invalidWeb}},
		{name: "problems: grouped per object, once across syncs", steps: func(r *Reporter) {
			ps := []compile.Problem{problem("web", "spec.sessionAffinity"), problem("web", "spec.ports[0]"), problem("api", "spec.x")}
			r.Problems(ps, all)
			r.Problems(ps, all)
		}, want: []string{
			"Warning NotProgrammed not programmed: spec.x: not supported",
			"Warning NotProgrammed not programmed: spec.sessionAffinity: not supported; spec.ports[0]: not supported",
		}},
		{name: "problem gone in a partial sync that did not cover it: kept", steps: func(r *Reporter) {
			r.Problems([]compile.Problem{problem("web", "spec.x")}, all)
			r.Problems(nil, none)
			r.Problems([]compile.Problem{problem("web", "spec.x")}, all)
		}, want: []string{"Warning NotProgrammed not programmed: spec.x: not supported"}},
		{name: "problem gone and back: reported again", steps: func(r *Reporter) {
			r.Problems([]compile.Problem{problem("web", "spec.x")}, all)
			r.Problems(nil, func(key string) bool { return key == "default/web" })
			r.Problems([]compile.Problem{problem("web", "spec.x")}, all)
		}, want: []string{"Warning NotProgrammed not programmed: spec.x: not supported", "Warning NotProgrammed not programmed: spec.x: not supported"}},
		{name: "problem changed: reported", steps: func(r *Reporter) {
			r.Problems([]compile.Problem{problem("web", "spec.x")}, all)
			r.Problems([]compile.Problem{problem("web", "spec.y")}, all)
		}, want: []string{"Warning NotProgrammed not programmed: spec.x: not supported", "Warning NotProgrammed not programmed: spec.y: not supported"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := record.NewFakeRecorder(10)
			tc.steps(New(rec, nil))
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// refRecorder keeps the objects events are attached to.
type refRecorder struct {
	record.FakeRecorder
	refs []*corev1.ObjectReference
}

func (r *refRecorder) Event(obj runtime.Object, _, _, _ string) {
	r.refs = append(r.refs, obj.(*corev1.ObjectReference))
}

// TestReference checks the event is attached to the object with its UID, so
// that `kubectl describe` shows it.
func TestReference(t *testing.T) {
	rec := &refRecorder{}
	r := New(rec, func(kind, ns, name string) types.UID { return types.UID("uid-" + name) })
	r.Problems([]compile.Problem{problem("api", "spec.x")}, all)
	r.Invalid("Service", svc("web"), badPort("web"))
	r.Invalid("EndpointSlice", &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", UID: "uid-web-1"}}, badPort("web"))
	want := []*corev1.ObjectReference{
		{Kind: "Service", APIVersion: "v1", Namespace: "default", Name: "api", UID: "uid-api"},
		{Kind: "Service", APIVersion: "v1", Namespace: "default", Name: "web", UID: "uid-web"},
		{Kind: "EndpointSlice", APIVersion: "discovery.k8s.io/v1", Namespace: "default", Name: "web-1", UID: "uid-web-1"},
	}
	if diff := cmp.Diff(want, rec.refs); diff != "" {
		t.Errorf("event objects (-want +got):\n%s", diff)
	}
}
