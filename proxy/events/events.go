// Package events tells users, through Kubernetes Warning events on their own
// objects, when nftproxy leaves a Service or EndpointSlice out: the object
// failed conversion (proxy/kube field errors) or the compiler could not
// program part of it (compile.Problem). The event names the field.
//
// # Once, not every sync
//
// A problem is reported when it first appears or its message changes, not on
// every sync: the sync loop runs at least every syncPeriod and the API server
// would otherwise collect an event per object per period. A problem is
// forgotten when the object is deleted or converts cleanly again, and for
// compiler problems when a sync that covered the object no longer reports
// it, so that it is reported again if it comes back.
package events

import (
	"errors"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/nftproxy/nftproxy/proxy/kube"
)

// Event reasons.
const (
	// ReasonInvalid: the object failed validation and is left out whole.
	ReasonInvalid = "Invalid"
	// ReasonNotProgrammed: the compiler left the object or a part of it out.
	ReasonNotProgrammed = "NotProgrammed"
)

// UIDFunc returns the UID of the object, or "" when it is not known;
// `kubectl describe` lists only events whose object UID matches.
type UIDFunc func(kind, namespace, name string) types.UID

// Reporter records Warning events, each distinct problem once.
type Reporter struct {
	rec record.EventRecorder
	uid UIDFunc

	mu       sync.Mutex
	invalid  map[object]string // conversion failures reported, by object
	problems map[object]string // compiler problems reported, by object
}

// object identifies an API object.
type object struct{ kind, namespace, name string }

// New returns a Reporter that records through rec; uid may be nil.
func New(rec record.EventRecorder, uid UIDFunc) *Reporter {
	if uid == nil {
		uid = func(string, string, string) types.UID { return "" }
	}
	return &Reporter{rec: rec, uid: uid, invalid: map[object]string{}, problems: map[object]string{}}
}

// Invalid reports that obj (of kind) failed conversion with err, unless
// the same message was reported for it already.
func (r *Reporter) Invalid(kind string, obj metav1.Object, err error) {
	o := object{kind, obj.GetNamespace(), obj.GetName()}
	msg := "not programmed: " + message(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.invalid[o] == msg {
		return
	}
	r.invalid[o] = msg
	r.rec.Event(reference(o, obj.GetUID()), corev1.EventTypeWarning, ReasonInvalid, msg)
}

// Forget drops what was reported about the object: it was deleted or is
// valid again.
func (r *Reporter) Forget(kind, namespace, name string) {
	o := object{kind, namespace, name}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.invalid, o)
	delete(r.problems, o)
}

// message lists the field errors of a proxy/kube ObjectError, or returns
// err's text for any other error.
func message(err error) string {
	var oe *kube.ObjectError
	if !errors.As(err, &oe) || len(oe.Fields) == 0 {
		return err.Error()
	}
	parts := make([]string, len(oe.Fields))
	for i, f := range oe.Fields {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

func reference(o object, uid types.UID) *corev1.ObjectReference {
	ref := &corev1.ObjectReference{Kind: o.kind, Namespace: o.namespace, Name: o.name, UID: uid, APIVersion: "v1"}
	if o.kind == "EndpointSlice" {
		ref.APIVersion = "discovery.k8s.io/v1"
	}
	return ref
}
