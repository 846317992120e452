package manifest

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nftproxy/nftproxy/proxy/kube"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// Result is what a set of manifest files describes.
type Result struct {
	// Snapshot holds the Services and EndpointSlices, each sorted by
	// namespace/name, and the ServiceCIDRs, sorted by name.
	Snapshot model.Snapshot
	// Nodes are sorted by name.
	Nodes []model.Node
	// Skipped describes, in reading order, each object that was read but
	// not converted: other kinds, and objects nftproxy does not program
	// (with the reason), e.g. "deploy.yaml: apps/v1 Deployment default/web".
	Skipped []string
}

// Load reads the manifests at paths (files or directories). It returns
// either a complete Result or every error found, never both.
func Load(paths []string) (*Result, error) {
	files, errs := listFiles(paths)
	l := &loader{errs: errs, seen: map[string]location{}}
	for _, f := range files {
		l.loadFile(f)
	}
	return l.result()
}

// result returns what was loaded, sorted, or every error found.
func (l *loader) result() (*Result, error) {
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	l.sort()
	return &l.res, nil
}

// loader accumulates the result and the errors of one Load.
type loader struct {
	res  Result
	errs []error
	// seen maps "Kind namespace/name" to where it was first defined.
	seen map[string]location
}

// location names where an object came from in error and skip messages.
type location struct {
	file string
	doc  int    // 1-based; 0 when the file holds a single document
	item string // e.g. "items[3]" inside a List
}

func (l location) String() string {
	s := l.file
	if l.doc > 0 {
		s += fmt.Sprintf(" (document %d)", l.doc)
	}
	if l.item != "" {
		s += ": " + l.item
	}
	return s
}

func (l *loader) loadFile(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		l.errs = append(l.errs, err)
		return
	}
	l.loadData(path, data)
}

// loadData loads the contents of the file at path: JSON when its name
// says so, else a YAML stream.
func (l *loader) loadData(path string, data []byte) {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		l.loadJSONFile(path, data)
		return
	}
	docs := splitYAML(data)
	for i, d := range docs {
		loc := location{file: path}
		if len(docs) > 1 {
			loc.doc = i + 1
		}
		j, err := d.toJSON()
		if err != nil {
			l.fail(loc, err)
			continue
		}
		l.loadDocument(loc, j, nil)
	}
}

func (l *loader) loadJSONFile(path string, data []byte) {
	docs, err := splitJSON(data)
	if err != nil {
		l.fail(location{file: path}, err)
		return
	}
	for i, d := range docs {
		loc := location{file: path}
		if len(docs) > 1 {
			loc.doc = i + 1
		}
		l.loadDocument(loc, d, nil)
	}
}

// fail records err at loc. An *kube.ObjectError is split into one error per
// field, so each line of the joined error names the file and the object.
func (l *loader) fail(loc location, err error) {
	var oe *kube.ObjectError
	if errors.As(err, &oe) && len(oe.Fields) > 1 {
		for _, f := range oe.Fields {
			one := *oe
			one.Fields = []kube.FieldError{f}
			l.errs = append(l.errs, fmt.Errorf("%s: %w", loc, &one))
		}
		return
	}
	l.errs = append(l.errs, fmt.Errorf("%s: %w", loc, err))
}

func (l *loader) skip(loc location, h *header, reason string) {
	s := fmt.Sprintf("%s: %s %s", loc, h.APIVersion, h.object())
	if reason != "" {
		s += ": " + reason
	}
	l.res.Skipped = append(l.res.Skipped, s)
}

// claim records that loc defines the object h names, and reports false
// (after recording an error naming both places) when another place did.
func (l *loader) claim(loc location, h *header) bool {
	key := h.object()
	if prev, dup := l.seen[key]; dup {
		l.fail(loc, fmt.Errorf("%s: already defined in %s", key, prev))
		return false
	}
	l.seen[key] = loc
	return true
}

func (l *loader) sort() {
	s := &l.res.Snapshot
	slices.SortFunc(s.Services, func(a, b model.Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(s.Slices, func(a, b model.EndpointSlice) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(s.ServiceCIDRs, func(a, b model.ServiceCIDR) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(l.res.Nodes, func(a, b model.Node) int { return cmp.Compare(a.Name, b.Name) })
}
