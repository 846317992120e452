package events

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/proxy/compile"
)

// Problems reports the compiler problems of one successful or failed sync.
// covered says whether a sync looked at the Service "namespace/name"
// (always true for a full sync; the changed Services for a partial one): a
// covered object whose problems are gone is forgotten.
func (r *Reporter) Problems(problems []compile.Problem, covered func(key string) bool) {
	current := group(problems)
	r.mu.Lock()
	defer r.mu.Unlock()
	for o := range r.problems {
		if _, still := current[o]; !still && covered(o.namespace+"/"+o.name) {
			delete(r.problems, o)
		}
	}
	for _, o := range sortedObjects(current) {
		msg := current[o]
		if r.problems[o] == msg {
			continue
		}
		r.problems[o] = msg
		r.rec.Event(reference(o, r.uid(o.kind, o.namespace, o.name)), corev1.EventTypeWarning, ReasonNotProgrammed, msg)
	}
}

// group joins the problems of each object into one message.
func group(problems []compile.Problem) map[object]string {
	out := map[object]string{}
	for _, p := range problems {
		o, ok := parseObject(p.Object)
		if !ok {
			continue
		}
		line := p.Detail
		if p.Field != "" {
			line = p.Field + ": " + p.Detail
		}
		if prev, seen := out[o]; seen {
			out[o] = prev + "; " + line
			continue
		}
		out[o] = "not programmed: " + line
	}
	return out
}

// parseObject reads compile.Problem's "Kind namespace/name".
func parseObject(s string) (object, bool) {
	kind, key, ok := strings.Cut(s, " ")
	if !ok {
		return object{}, false
	}
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return object{}, false
	}
	return object{kind, ns, name}, true
}

func sortedObjects(m map[object]string) []object {
	out := make([]object, 0, len(m))
	for o := range m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.kind+" "+a.namespace+"/"+a.name < b.kind+" "+b.namespace+"/"+b.name
	})
	return out
}
