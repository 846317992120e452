package kube

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectError lists every validation problem found in one API object.
type ObjectError struct {
	Kind      string
	Namespace string // empty for cluster-scoped objects
	Name      string
	Fields    []FieldError
}

// FieldError is one problem at one field path, e.g. "spec.ports[1].protocol".
type FieldError struct {
	// Path is empty when the problem concerns the object as a whole.
	Path   string
	Detail string
}

// String returns "path: detail".
func (f FieldError) String() string {
	if f.Path == "" {
		return f.Detail
	}
	return f.Path + ": " + f.Detail
}

// Object returns "Kind namespace/name", or "Kind name" when cluster-scoped.
func (e *ObjectError) Object() string {
	if e.Namespace == "" {
		return e.Kind + " " + e.Name
	}
	return e.Kind + " " + e.Namespace + "/" + e.Name
}

// Error returns one line per field so each line names the object and stands
// alone in a log.
func (e *ObjectError) Error() string {
	if len(e.Fields) == 0 {
		return e.Object() + ": invalid"
	}
	lines := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		lines[i] = e.Object() + ": " + f.String()
	}
	return strings.Join(lines, "\n")
}

// fieldErrors collects problems while a converter walks an object.
type fieldErrors []FieldError

func (fe *fieldErrors) add(path, format string, args ...any) {
	*fe = append(*fe, FieldError{Path: path, Detail: fmt.Sprintf(format, args...)})
}

// err returns nil when nothing was collected, so callers can return it as is.
func (fe fieldErrors) err(kind string, meta *metav1.ObjectMeta) error {
	if len(fe) == 0 {
		return nil
	}
	return &ObjectError{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, Fields: fe}
}

// index returns "path[i]".
func index(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}
