// Package metrics defines nftproxy's Prometheus metrics and serves them.
//
// Names follow kube-proxy's (subsystem kubeproxy) wherever the meaning is the
// same, so that existing dashboards and alerts keep working after a switch;
// the figures kube-proxy has no equivalent for are named nftproxy_*.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

const kubeProxy = "kubeproxy"

// Metrics holds every metric the agent updates.
type Metrics struct {
	// SyncDuration, SyncFullDuration and SyncPartialDuration time every
	// sync, full syncs (tables replaced) and partial ones.
	SyncDuration        prometheus.Histogram
	SyncFullDuration    prometheus.Histogram
	SyncPartialDuration prometheus.Histogram
	// LastSync is when the last sync succeeded; LastQueued when the last
	// change was queued for a sync.
	LastSync   prometheus.Gauge
	LastQueued prometheus.Gauge
	// SyncFailures counts failed syncs (kube-proxy's nftables mode name).
	SyncFailures prometheus.Counter
	// NetworkProgramming is the time from an EndpointSlice change (the
	// endpoints.kubernetes.io/last-change-trigger-time annotation) to the
	// sync that programmed it.
	NetworkProgramming prometheus.Histogram
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
}

// New returns the metrics registered in a new registry, together with the
// Go runtime and process collectors (process_resident_memory_bytes etc.).
func New() *Metrics {
	m := &Metrics{
		SyncDuration:           histogram("sync_proxy_rules_duration_seconds", "SyncProxyRules latency in seconds", syncBuckets),
		SyncFullDuration:       histogram("sync_full_proxy_rules_duration_seconds", "SyncProxyRules latency in seconds for full resyncs", syncBuckets),
		SyncPartialDuration:    histogram("sync_partial_proxy_rules_duration_seconds", "SyncProxyRules latency in seconds for partial resyncs", syncBuckets),
		LastSync:               gauge("sync_proxy_rules_last_timestamp_seconds", "The last time proxy rules were successfully synced"),
		LastQueued:             gauge("sync_proxy_rules_last_queued_timestamp_seconds", "The last time a sync of proxy rules was queued"),
		SyncFailures:           counter("sync_proxy_rules_nftables_sync_failures_total", "Cumulative proxy nftables sync failures"),
		NetworkProgramming:     histogram("network_programming_duration_seconds", "In Cluster Network Programming Latency in seconds", programmingBuckets()),
		ServiceChangesPending:  gauge("sync_proxy_rules_service_changes_pending", "Pending proxy rules Service changes"),
		EndpointChangesPending: gauge("sync_proxy_rules_endpoint_changes_pending", "Pending proxy rules Endpoint changes"),
		ServiceChangesTotal:    counter("sync_proxy_rules_service_changes_total", "Cumulative proxy rules Service changes"),
		EndpointChangesTotal:   counter("sync_proxy_rules_endpoint_changes_total", "Cumulative proxy rules Endpoint changes"),
		HealthzTotal:           codes("proxy_healthz_total", "Cumulative proxy healthz HTTP status"),
		LivezTotal:             codes("proxy_livez_total", "Cumulative proxy livez HTTP status"),
		TransactionOps: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nftproxy_transaction_operations", Help: "Operations in each committed nftables transaction",
			Buckets: prometheus.ExponentialBuckets(1, 4, 12),
		}),
		TransactionBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nftproxy_transaction_bytes", Help: "Netlink bytes sent in each committed nftables transaction",
			Buckets: prometheus.ExponentialBuckets(256, 4, 12),
		}),
		Repairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nftproxy_external_changes_repaired_total", Help: "Repairs of nftproxy's tables after someone else changed them",
		}),
		NotificationsLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nftproxy_notifications_lost_total",
			Help: "Times the kernel's notifications of ruleset changes were lost or not followed, so nftproxy read its tables back whole",
		}),
		registry: prometheus.NewRegistry(),
	}
	m.registry.MustRegister(m.collectors()...)
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.SyncDuration, m.SyncFullDuration, m.SyncPartialDuration, m.LastSync, m.LastQueued,
		m.SyncFailures, m.NetworkProgramming, m.ServiceChangesPending, m.EndpointChangesPending,
		m.ServiceChangesTotal, m.EndpointChangesTotal, m.HealthzTotal, m.LivezTotal,
		m.TransactionOps, m.TransactionBytes, m.Repairs, m.NotificationsLost,
	}
}

// Registry returns the registry the metrics live in.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// syncBuckets are kube-proxy's: 1ms to about 16s.
var syncBuckets = prometheus.ExponentialBuckets(0.001, 2, 15)

// programmingBuckets are kube-proxy's: 0.25s and 0.5s, every second up to a
// minute, every 5s up to two, every 30s up to five.
func programmingBuckets() []float64 {
	var b []float64
	b = append(b, prometheus.LinearBuckets(0.25, 0.25, 2)...)
	b = append(b, prometheus.LinearBuckets(1, 1, 59)...)
	b = append(b, prometheus.LinearBuckets(60, 5, 12)...)
	return append(b, prometheus.LinearBuckets(120, 30, 7)...)
}

func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: kubeProxy, Name: name, Help: help, Buckets: buckets})
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Subsystem: kubeProxy, Name: name, Help: help})
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Subsystem: kubeProxy, Name: name, Help: help})
}

func codes(name, help string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: kubeProxy, Name: name, Help: help}, []string{"code"})
}
