package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/nftproxy/nftproxy/proxy/kube"
)

// header is the part of any object needed to route and name it.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
}

// object returns "Kind namespace/name", or "Kind name" without namespace.
func (h *header) object() string {
	if h.Metadata.Namespace == "" {
		return h.Kind + " " + h.Metadata.Name
	}
	return h.Kind + " " + h.Metadata.Namespace + "/" + h.Metadata.Name
}

// kind describes one kind of object nftproxy reads.
type kind struct {
	apiVersion string
	namespaced bool
	load       func(l *loader, loc location, h *header, data []byte)
}

var kinds = map[string]kind{
	"Service":       {"v1", true, (*loader).loadService},
	"EndpointSlice": {"discovery.k8s.io/v1", true, (*loader).loadSlice},
	"Node":          {"v1", false, (*loader).loadNode},
	"ServiceCIDR":   {"networking.k8s.io/v1", false, (*loader).loadServiceCIDR},
}

// loadDocument routes one JSON value. elem holds the apiVersion and kind of
// a typed List's items (a ServiceList's are v1 Service), which the API
// server leaves out of each item; it is nil otherwise.
func (l *loader) loadDocument(loc location, data []byte, elem *header) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return // an empty document, e.g. "---" followed by "~"
	}
	if data[0] != '{' {
		l.fail(loc, errors.New("not an object"))
		return
	}
	var h header
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &h); err != nil {
		l.fail(loc, fmt.Errorf("read apiVersion, kind and metadata: %w", err))
		return
	}
	if elem != nil && h.Kind == "" {
		h.APIVersion, h.Kind = elem.APIVersion, elem.Kind
	}
	k, known := kinds[h.Kind]
	switch {
	case h.APIVersion == "" || h.Kind == "":
		l.fail(loc, fmt.Errorf("object without apiVersion or kind (apiVersion %q, kind %q)", h.APIVersion, h.Kind))
	case h.Kind == "List" || strings.HasSuffix(h.Kind, "List"):
		l.loadList(loc, &h, data)
	case !known:
		l.skip(loc, &h, "")
	case h.APIVersion != k.apiVersion:
		l.skip(loc, &h, "unsupported apiVersion, want "+k.apiVersion)
	default:
		h.Metadata.Namespace = namespace(k, h.Metadata.Namespace)
		if l.claim(loc, &h) {
			k.load(l, loc, &h, data)
		}
	}
}

// namespace defaults an empty namespace as kubectl does, and clears it for
// cluster-scoped kinds, which the API server would ignore it for.
func namespace(k kind, ns string) string {
	switch {
	case !k.namespaced:
		return ""
	case ns == "":
		return metav1.NamespaceDefault
	}
	return ns
}

// list is any List: kind List or a typed list such as ServiceList.
type list struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ListMeta   `json:"metadata"`
	Items           []json.RawMessage `json:"items"`
}

func (l *loader) loadList(loc location, h *header, data []byte) {
	var lst list
	strict, err := sigsjson.UnmarshalStrict(data, &lst)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		l.fail(loc, fmt.Errorf("%s %s: %w", h.APIVersion, h.Kind, err))
		return
	}
	var elem *header
	if h.Kind != "List" {
		elem = &header{APIVersion: h.APIVersion, Kind: strings.TrimSuffix(h.Kind, "List")}
	}
	for i, item := range lst.Items {
		iloc := loc
		iloc.item = strings.TrimPrefix(fmt.Sprintf("%s.items[%d]", loc.item, i), ".")
		l.loadDocument(iloc, item, elem)
	}
}

// decode decodes data into obj as the API server would: field names match
// case-sensitively, and unknown or duplicate fields are errors.
func (l *loader) decode(loc location, h *header, data []byte, obj any) bool {
	strict, err := sigsjson.UnmarshalStrict(data, obj)
	var fields []kube.FieldError
	if err != nil {
		fields = append(fields, kube.FieldError{Detail: strings.TrimPrefix(err.Error(), "json: ")})
	}
	for _, e := range strict {
		var fe sigsjson.FieldError
		if !errors.As(e, &fe) {
			fields = append(fields, kube.FieldError{Detail: e.Error()})
			continue
		}
		// e reads `unknown field "spec.foo"`; split it into path and detail.
		detail := strings.TrimSuffix(e.Error(), " "+strconv.Quote(fe.FieldPath()))
		fields = append(fields, kube.FieldError{Path: fe.FieldPath(), Detail: detail})
	}
	if len(fields) == 0 {
		return true
	}
	l.fail(loc, &kube.ObjectError{Kind: h.Kind, Namespace: h.Metadata.Namespace, Name: h.Metadata.Name, Fields: fields})
	return false
}

func (l *loader) loadService(loc location, h *header, data []byte) {
	var svc corev1.Service
	if !l.decode(loc, h, data, &svc) {
		return
	}
	svc.Namespace = h.Metadata.Namespace
	if reason := kube.ServiceSkipReason(&svc); reason != "" {
		l.skip(loc, h, reason)
		return
	}
	m, err := kube.ConvertService(&svc)
	if err != nil {
		l.fail(loc, err)
		return
	}
	l.res.Snapshot.Services = append(l.res.Snapshot.Services, *m)
}

func (l *loader) loadSlice(loc location, h *header, data []byte) {
	var s discoveryv1.EndpointSlice
	if !l.decode(loc, h, data, &s) {
		return
	}
	s.Namespace = h.Metadata.Namespace
	if reason := kube.SliceSkipReason(&s); reason != "" {
		l.skip(loc, h, reason)
		return
	}
	m, err := kube.ConvertSlice(&s)
	if err != nil {
		l.fail(loc, err)
		return
	}
	l.res.Snapshot.Slices = append(l.res.Snapshot.Slices, *m)
}

func (l *loader) loadNode(loc location, h *header, data []byte) {
	var n corev1.Node
	if !l.decode(loc, h, data, &n) {
		return
	}
	m, err := kube.ConvertNode(&n)
	if err != nil {
		l.fail(loc, err)
		return
	}
	l.res.Nodes = append(l.res.Nodes, *m)
}

func (l *loader) loadServiceCIDR(loc location, h *header, data []byte) {
	var sc networkingv1.ServiceCIDR
	if !l.decode(loc, h, data, &sc) {
		return
	}
	m, err := kube.ConvertServiceCIDR(&sc)
	if err != nil {
		l.fail(loc, err)
		return
	}
	l.res.Snapshot.ServiceCIDRs = append(l.res.Snapshot.ServiceCIDRs, *m)
}
