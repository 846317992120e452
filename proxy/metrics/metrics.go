// Package metrics defines nftproxy's Prometheus metrics and serves them.
//
// Names, types, labels and buckets follow kube-proxy's nftables mode
// (k8s.io/kubernetes pkg/proxy/metrics) wherever the meaning is the same,
// so that existing dashboards and alerts keep working after a switch;
// testdata/kube-proxy-metrics.txt is kube-proxy's list and a test compares
// ours with it (hack/metrics-diff.sh prints the difference). The figures
// kube-proxy has no equivalent for are named nftproxy_*.
//
// # IP families
//
// kube-proxy runs one proxier per IP family and labels what each does with
// ip_family ("IPv4", "IPv6"). nftproxy commits both families' tables in one
// transaction; a sync is recorded under each family it programs (the
// families that have a table), with the same duration, as kube-proxy's two
// proxiers each record theirs. A network programming latency belongs to
// the family of the EndpointSlice that changed.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

const kubeProxy = "kubeproxy"

// The values of the ip_family label, as kube-proxy's (v1.IPFamily).
const (
	IPv4 = "IPv4"
	IPv6 = "IPv6"
)

// The values of the traffic_policy label of NoLocalEndpoints.
const (
	PolicyInternal = "internal"
	PolicyExternal = "external"
)

// Metrics holds every metric the agent updates.
type Metrics struct {
	// SyncDuration, SyncFullDuration and SyncPartialDuration time every
	// sync, full syncs (tables replaced) and partial ones, by ip_family.
	SyncDuration        *prometheus.HistogramVec
	SyncFullDuration    *prometheus.HistogramVec
	SyncPartialDuration *prometheus.HistogramVec
	// LastSync is when the last sync succeeded; LastQueued when the last
	// change was queued for a sync; by ip_family.
	LastSync   *prometheus.GaugeVec
	LastQueued *prometheus.GaugeVec
	// SyncFailures counts failed syncs by ip_family (kube-proxy's
	// nftables mode name).
	SyncFailures *prometheus.CounterVec
	// NetworkProgramming is the time from an EndpointSlice change (the
	// endpoints.kubernetes.io/last-change-trigger-time annotation) to the
	// sync that programmed it: one observation per change, by the slice's
	// ip_family.
	NetworkProgramming *prometheus.HistogramVec
	// NoLocalEndpoints counts the Service ports with a Local traffic
	// policy and endpoints, none of them on this node, by traffic_policy
	// (internal, external) and ip_family.
	NoLocalEndpoints *prometheus.GaugeVec
	// ConntrackReconcile times each removal of stale UDP conntrack
	// entries, and ConntrackDeleted counts the entries removed, by
	// ip_family.
	ConntrackReconcile *prometheus.HistogramVec
	ConntrackDeleted   *prometheus.CounterVec
	// Pending changes: Services whose Service (or EndpointSlices) changed
	// since the last successful sync; and the cumulative counts.
	ServiceChangesPending  prometheus.Gauge
	EndpointChangesPending prometheus.Gauge
	ServiceChangesTotal    prometheus.Counter
	EndpointChangesTotal   prometheus.Counter
	// HealthzTotal and LivezTotal count health responses by HTTP code.
	HealthzTotal *prometheus.CounterVec
	LivezTotal   *prometheus.CounterVec
	// Ours: size of each committed transaction, repairs of changes made
	// to our tables by someone else, and the times the kernel's
	// notifications of those changes were lost (the tables were read back).
	TransactionOps    prometheus.Histogram
	TransactionBytes  prometheus.Histogram
	Repairs           prometheus.Counter
	NotificationsLost prometheus.Counter

	registry *prometheus.Registry
	// vecs are the labelled metrics and a way to make one child of each,
	// for List.
	vecs []func()
}

// New returns the metrics registered in a new registry, together with the
// Go runtime and process collectors (process_resident_memory_bytes etc.).
func New() *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry()}
	m.SyncDuration = m.histogramVec("sync_proxy_rules_duration_seconds", "SyncProxyRules latency in seconds", syncBuckets)
	m.SyncFullDuration = m.histogramVec("sync_full_proxy_rules_duration_seconds", "SyncProxyRules latency in seconds for full resyncs", syncBuckets)
	m.SyncPartialDuration = m.histogramVec("sync_partial_proxy_rules_duration_seconds", "SyncProxyRules latency in seconds for partial resyncs", syncBuckets)
	m.LastSync = m.gaugeVec("sync_proxy_rules_last_timestamp_seconds", "The last time proxy rules were successfully synced", "ip_family")
	m.LastQueued = m.gaugeVec("sync_proxy_rules_last_queued_timestamp_seconds", "The last time a sync of proxy rules was queued", "ip_family")
	m.SyncFailures = m.counterVec("sync_proxy_rules_nftables_sync_failures_total", "Cumulative proxy nftables sync failures", "ip_family")
	m.NetworkProgramming = m.histogramVec("network_programming_duration_seconds", "In Cluster Network Programming Latency in seconds", programmingBuckets())
	m.NoLocalEndpoints = m.gaugeVec("sync_proxy_rules_no_local_endpoints_total", "Number of services with a Local traffic policy and no endpoints", "traffic_policy", "ip_family")
	m.ConntrackReconcile = m.histogramVec("conntrack_reconciler_sync_duration_seconds", "ReconcileConntrackFlowsLatency latency in seconds", syncBuckets)
	m.ConntrackDeleted = m.counterVec("conntrack_reconciler_deleted_entries_total", "Cumulative conntrack flows deleted by conntrack reconciler", "ip_family")
	m.ServiceChangesPending = m.gauge("sync_proxy_rules_service_changes_pending", "Pending proxy rules Service changes")
	m.EndpointChangesPending = m.gauge("sync_proxy_rules_endpoint_changes_pending", "Pending proxy rules Endpoint changes")
	m.ServiceChangesTotal = m.counter("sync_proxy_rules_service_changes_total", "Cumulative proxy rules Service changes")
	m.EndpointChangesTotal = m.counter("sync_proxy_rules_endpoint_changes_total", "Cumulative proxy rules Endpoint changes")
	m.HealthzTotal = m.counterVec("proxy_healthz_total", "Cumulative proxy healthz HTTP status", "code")
	m.LivezTotal = m.counterVec("proxy_livez_total", "Cumulative proxy livez HTTP status", "code")
	m.TransactionOps = m.own(prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "nftproxy_transaction_operations", Help: "Operations in each committed nftables transaction",
		Buckets: prometheus.ExponentialBuckets(1, 4, 12),
	}))
	m.TransactionBytes = m.own(prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "nftproxy_transaction_bytes", Help: "Netlink bytes sent in each committed nftables transaction",
		Buckets: prometheus.ExponentialBuckets(256, 4, 12),
	}))
	m.Repairs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "nftproxy_external_changes_repaired_total", Help: "Repairs of nftproxy's tables after someone else changed them",
	})
	m.NotificationsLost = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "nftproxy_notifications_lost_total",
		Help: "Times the kernel's notifications of ruleset changes were lost or not followed, so nftproxy read its tables back whole",
	})
	m.registry.MustRegister(m.Repairs, m.NotificationsLost)
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry the metrics live in.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// syncBuckets are kube-proxy's: 1ms to about 16s.
var syncBuckets = prometheus.ExponentialBuckets(0.001, 2, 15)

// programmingBuckets are kube-proxy's: 0 (component-base's MergeBuckets
// starts with it), 0.25s and 0.5s, every second up to a minute, every 5s up
// to two, every 30s up to five.
func programmingBuckets() []float64 {
	b := []float64{0}
	b = append(b, prometheus.LinearBuckets(0.25, 0.25, 2)...)
	b = append(b, prometheus.LinearBuckets(1, 1, 59)...)
	b = append(b, prometheus.LinearBuckets(60, 5, 12)...)
	return append(b, prometheus.LinearBuckets(120, 30, 7)...)
}

// histogramVec registers a kubeproxy_ histogram labelled by ip_family.
func (m *Metrics) histogramVec(name, help string, buckets []float64) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: kubeProxy, Name: name, Help: help, Buckets: buckets}, []string{"ip_family"})
	m.registry.MustRegister(v)
	m.vecs = append(m.vecs, func() { v.WithLabelValues("x") })
	return v
}

func (m *Metrics) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: kubeProxy, Name: name, Help: help}, labels)
	m.registry.MustRegister(v)
	m.vecs = append(m.vecs, func() { v.WithLabelValues(make([]string, len(labels))...) })
	return v
}

func (m *Metrics) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: kubeProxy, Name: name, Help: help}, labels)
	m.registry.MustRegister(v)
	m.vecs = append(m.vecs, func() { v.WithLabelValues(make([]string, len(labels))...) })
	return v
}

func (m *Metrics) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Subsystem: kubeProxy, Name: name, Help: help})
	m.registry.MustRegister(g)
	return g
}

func (m *Metrics) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Subsystem: kubeProxy, Name: name, Help: help})
	m.registry.MustRegister(c)
	return c
}

func (m *Metrics) own(h prometheus.Histogram) prometheus.Histogram {
	m.registry.MustRegister(h)
	return h
}
