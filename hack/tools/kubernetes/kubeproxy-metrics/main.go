// Command kubeproxy-metrics prints the metrics kube-proxy registers in
// nftables mode, with the feature gates at their defaults, one per line as
// proxy/metrics lists nftproxy's:
//
//	NAME TYPE [LABEL,...] buckets=B1,B2,...
//
// It calls kube-proxy's own RegisterMetrics and prints what that
// registered, so the list follows the pinned k8s.io/kubernetes version;
// proxy/metrics/testdata holds its output and compares nftproxy's metrics
// with it (hack/metrics-diff.sh).
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics"
	kubeproxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	proxymetrics "k8s.io/kubernetes/pkg/proxy/metrics"
)

// described is what every metric of pkg/proxy/metrics is once created.
type described interface {
	IsCreated() bool
	Describe(chan<- *prometheus.Desc)
}

// entry is one exported metric of pkg/proxy/metrics: its object, type and
// options (name parts, buckets).
type entry struct {
	m       described
	typ     string
	fqName  string
	buckets []float64
}

func histogram(m described, o *metrics.HistogramOpts) entry {
	return entry{m, "histogram", metrics.BuildFQName(o.Namespace, o.Subsystem, o.Name), o.Buckets}
}

func gauge(m described, o *metrics.GaugeOpts) entry {
	return entry{m, "gauge", metrics.BuildFQName(o.Namespace, o.Subsystem, o.Name), nil}
}

func counter(m described, o *metrics.CounterOpts) entry {
	return entry{m, "counter", metrics.BuildFQName(o.Namespace, o.Subsystem, o.Name), nil}
}

// all is every exported metric variable of pkg/proxy/metrics, in every
// mode; RegisterMetrics decides which exist in nftables mode.
func all() []entry {
	return []entry{
		histogram(proxymetrics.SyncProxyRulesLatency, proxymetrics.SyncProxyRulesLatency.HistogramOpts),
		histogram(proxymetrics.SyncFullProxyRulesLatency, proxymetrics.SyncFullProxyRulesLatency.HistogramOpts),
		histogram(proxymetrics.SyncPartialProxyRulesLatency, proxymetrics.SyncPartialProxyRulesLatency.HistogramOpts),
		gauge(proxymetrics.SyncProxyRulesLastTimestamp, proxymetrics.SyncProxyRulesLastTimestamp.GaugeOpts),
		histogram(proxymetrics.NetworkProgrammingLatency, proxymetrics.NetworkProgrammingLatency.HistogramOpts),
		gauge(proxymetrics.EndpointChangesPending, proxymetrics.EndpointChangesPending.GaugeOpts),
		counter(proxymetrics.EndpointChangesTotal, proxymetrics.EndpointChangesTotal.CounterOpts),
		gauge(proxymetrics.ServiceChangesPending, proxymetrics.ServiceChangesPending.GaugeOpts),
		counter(proxymetrics.ServiceChangesTotal, proxymetrics.ServiceChangesTotal.CounterOpts),
		counter(proxymetrics.IPTablesRestoreFailuresTotal, proxymetrics.IPTablesRestoreFailuresTotal.CounterOpts),
		counter(proxymetrics.IPTablesPartialRestoreFailuresTotal, proxymetrics.IPTablesPartialRestoreFailuresTotal.CounterOpts),
		gauge(proxymetrics.IPTablesRulesTotal, proxymetrics.IPTablesRulesTotal.GaugeOpts),
		gauge(proxymetrics.IPTablesRulesLastSync, proxymetrics.IPTablesRulesLastSync.GaugeOpts),
		counter(proxymetrics.NFTablesSyncFailuresTotal, proxymetrics.NFTablesSyncFailuresTotal.CounterOpts),
		counter(proxymetrics.NFTablesCleanupFailuresTotal, proxymetrics.NFTablesCleanupFailuresTotal.CounterOpts),
		counter(proxymetrics.ProxyHealthzTotal, proxymetrics.ProxyHealthzTotal.CounterOpts),
		counter(proxymetrics.ProxyLivezTotal, proxymetrics.ProxyLivezTotal.CounterOpts),
		gauge(proxymetrics.SyncProxyRulesLastQueuedTimestamp, proxymetrics.SyncProxyRulesLastQueuedTimestamp.GaugeOpts),
		gauge(proxymetrics.SyncProxyRulesNoLocalEndpointsTotal, proxymetrics.SyncProxyRulesNoLocalEndpointsTotal.GaugeOpts),
		counter(proxymetrics.WinKernelLBCreateFailure, proxymetrics.WinKernelLBCreateFailure.CounterOpts),
		counter(proxymetrics.WinKernelLBUpdateFailure, proxymetrics.WinKernelLBUpdateFailure.CounterOpts),
		counter(proxymetrics.WinKernelLBDeleteFailure, proxymetrics.WinKernelLBDeleteFailure.CounterOpts),
		gauge(proxymetrics.LocalhostNodePortListeners, proxymetrics.LocalhostNodePortListeners.GaugeOpts),
		counter(proxymetrics.LocalhostNodePortListenerCreationFailuresTotal, proxymetrics.LocalhostNodePortListenerCreationFailuresTotal.CounterOpts),
		histogram(proxymetrics.ReconcileConntrackFlowsLatency, proxymetrics.ReconcileConntrackFlowsLatency.HistogramOpts),
		counter(proxymetrics.ReconcileConntrackFlowsDeletedEntriesTotal, proxymetrics.ReconcileConntrackFlowsDeletedEntriesTotal.CounterOpts),
	}
}

func main() {
	proxymetrics.RegisterMetrics(kubeproxyconfig.ProxyModeNFTables)
	var lines []string
	for _, e := range all() {
		if !e.m.IsCreated() {
			continue // not registered in nftables mode
		}
		labels, err := labelNames(e.m)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kubeproxy-metrics: %s: %v\n", e.fqName, err)
			os.Exit(1)
		}
		lines = append(lines, line(e.fqName, e.typ, labels, e.buckets))
	}
	slices.Sort(lines)
	fmt.Printf("# kube-proxy %s, nftables mode, default feature gates (hack/tools/kubernetes/kubeproxy-metrics)\n", kubernetesVersion())
	fmt.Println(strings.Join(lines, "\n"))
}

// kubernetesVersion is the version of k8s.io/kubernetes this was built from.
func kubernetesVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

// labelNames returns the variable labels of m's one Desc: the number of
// label values a constant metric of that Desc accepts, and their names as
// the metric then carries them (sorted, as Prometheus exposes them).
func labelNames(m described) ([]string, error) {
	ch := make(chan *prometheus.Desc, 1)
	m.Describe(ch)
	desc := <-ch
	for n := range 8 {
		cm, err := prometheus.NewConstMetric(desc, prometheus.UntypedValue, 0, make([]string, n)...)
		if err != nil {
			continue // another number of labels
		}
		var out dto.Metric
		if err := cm.Write(&out); err != nil {
			return nil, err
		}
		var names []string
		for _, l := range out.GetLabel() {
			names = append(names, l.GetName())
		}
		return names, nil
	}
	return nil, fmt.Errorf("no number of labels up to 7 fits %v", desc)
}

// line is one metric as proxy/metrics lists it.
func line(name, typ string, labels []string, buckets []float64) string {
	s := fmt.Sprintf("%s %s [%s]", name, typ, strings.Join(labels, ","))
	if len(buckets) > 0 {
		b := make([]string, len(buckets))
		for i, v := range buckets {
			b[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		s += " buckets=" + strings.Join(b, ",")
	}
	return s
}
