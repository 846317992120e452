package metrics

import (
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantNames are the names dashboards rely on: kube-proxy's, then ours.
var wantNames = []string{
	"kubeproxy_network_programming_duration_seconds",
	"kubeproxy_proxy_healthz_total",
	"kubeproxy_proxy_livez_total",
	"kubeproxy_sync_full_proxy_rules_duration_seconds",
	"kubeproxy_sync_partial_proxy_rules_duration_seconds",
	"kubeproxy_sync_proxy_rules_duration_seconds",
	"kubeproxy_sync_proxy_rules_endpoint_changes_pending",
	"kubeproxy_sync_proxy_rules_endpoint_changes_total",
	"kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
	"kubeproxy_sync_proxy_rules_last_timestamp_seconds",
	"kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
	"kubeproxy_sync_proxy_rules_service_changes_pending",
	"kubeproxy_sync_proxy_rules_service_changes_total",
	"nftproxy_external_changes_repaired_total",
	"nftproxy_notifications_lost_total",
	"nftproxy_transaction_bytes",
	"nftproxy_transaction_operations",
}

func TestNames(t *testing.T) {
	m := New()
	// Vectors appear once they have a label value.
	m.HealthzTotal.WithLabelValues("200").Inc()
	m.LivezTotal.WithLabelValues("200").Inc()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if name := f.GetName(); strings.HasPrefix(name, "kubeproxy_") || strings.HasPrefix(name, "nftproxy_") {
			got = append(got, name)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(wantNames, got); diff != "" {
		t.Errorf("metric names (-want +got):\n%s", diff)
	}
}

func TestHandler(t *testing.T) {
	m := New()
	m.Repairs.Inc()
	tests := []struct{ path, want string }{
		{"/metrics", "nftproxy_external_changes_repaired_total 1\n"},
		{"/metrics", "process_resident_memory_bytes "},
		{"/healthz", "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != 200 || !strings.Contains(string(body), tc.want) {
				t.Errorf("GET %s: %d, body does not contain %q:\n%s", tc.path, rec.Code, tc.want, body)
			}
		})
	}
}
