package main

import (
	"math"
	"strings"
	"testing"
)

// kube-proxy's histograms carry an ip_family label; the series add up.
const sampleMetrics = `# HELP kubeproxy_network_programming_duration_seconds x
# TYPE kubeproxy_network_programming_duration_seconds histogram
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="0.25"} 2
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="0.5"} 6
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="1"} 10
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="+Inf"} 10
kubeproxy_network_programming_duration_seconds_sum{ip_family="IPv4"} 4.5
kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"} 10
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv6",le="0.25"} 0
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv6",le="0.5"} 0
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv6",le="1"} 0
kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv6",le="+Inf"} 0
kubeproxy_network_programming_duration_seconds_sum{ip_family="IPv6"} 0
kubeproxy_network_programming_duration_seconds_count{ip_family="IPv6"} 0
kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="+Inf"} 3
kubeproxy_sync_proxy_rules_duration_seconds_sum 0.3
kubeproxy_sync_proxy_rules_duration_seconds_count 3
kubeproxy_sync_proxy_rules_duration_seconds_count_other 99
`

func TestParseMetricsAndQuantile(t *testing.T) {
	m, err := parseMetrics(strings.NewReader(sampleMetrics), metricProgramming, metricSync)
	if err != nil {
		t.Fatal(err)
	}
	prog, sync := m[metricProgramming], m[metricSync]
	if prog.count != 10 || prog.sum != 4.5 || sync.count != 3 || sync.sum != 0.3 {
		t.Fatalf("programming count %v sum %v, sync count %v sum %v; want 10 4.5 3 0.3", prog.count, prog.sum, sync.count, sync.sum)
	}
	for _, tc := range []struct{ q, est, bound float64 }{
		{0.1, 0.125, 0.25}, // rank 1 of the 2 in (0, 0.25]
		{0.5, 0.4375, 0.5}, // rank 5: 3 of the 4 in (0.25, 0.5]
		{0.99, 0.9875, 1},  // rank 9.9: 3.9 of the 4 in (0.5, 1]
	} {
		est, bound := prog.quantile(tc.q)
		if math.Abs(est-tc.est) > 1e-9 || bound != tc.bound {
			t.Errorf("quantile(%v) = %v (bucket %v), want %v (bucket %v)", tc.q, est, bound, tc.est, tc.bound)
		}
	}
	empty := prog.sub(prog)
	if est, _ := empty.quantile(0.5); !math.IsNaN(est) {
		t.Errorf("quantile of nothing observed = %v, want NaN", est)
	}
}
