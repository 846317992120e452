package metrics

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// List returns every kubeproxy_ and nftproxy_ metric as registered, one
// line each, sorted, in the form hack/tools/kubernetes/kubeproxy-metrics prints
// kube-proxy's:
//
//	NAME TYPE [LABEL,...] buckets=B1,B2,...
//
// It reads them from the registry of a fresh Metrics whose labelled
// metrics each got one child (a vector without children is not exposed).
func List() ([]string, error) {
	m := New()
	for _, touch := range m.vecs {
		touch()
	}
	families, err := m.registry.Gather()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range families {
		if name := f.GetName(); strings.HasPrefix(name, kubeProxy+"_") || strings.HasPrefix(name, "nftproxy_") {
			out = append(out, line(f))
		}
	}
	slices.Sort(out)
	return out, nil
}

// line describes one metric family from its first metric.
func line(f *dto.MetricFamily) string {
	var labels, buckets []string
	if ms := f.GetMetric(); len(ms) > 0 {
		for _, l := range ms[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		for _, b := range ms[0].GetHistogram().GetBucket() {
			buckets = append(buckets, strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))
		}
	}
	s := fmt.Sprintf("%s %s [%s]", f.GetName(), strings.ToLower(f.GetType().String()), strings.Join(labels, ","))
	if len(buckets) > 0 {
		s += " buckets=" + strings.Join(buckets, ",")
	}
	return s
}
