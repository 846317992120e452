package healthz

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const timeout = 60 * time.Second // 2 x syncPeriod 30s

func TestHealth(t *testing.T) {
	deleting := metav1.NewTime(t0)
	tests := []struct {
		name        string
		steps       func(s *Server, c *clocktesting.FakeClock)
		wantHealthz int
		wantLivez   int
	}{
		{name: "starting", steps: func(*Server, *clocktesting.FakeClock) {}, wantHealthz: 200, wantLivez: 200},
		{name: "queued, not late", steps: func(s *Server, c *clocktesting.FakeClock) {
			s.QueuedUpdate()
			c.Step(timeout - time.Second)
		}, wantHealthz: 200, wantLivez: 200},
		{name: "queued, late", steps: func(s *Server, c *clocktesting.FakeClock) {
			s.QueuedUpdate()
			c.Step(timeout)
		}, wantHealthz: 503, wantLivez: 503},
		{name: "the oldest queued change counts", steps: func(s *Server, c *clocktesting.FakeClock) {
			s.QueuedUpdate()
			c.Step(timeout / 2)
			s.QueuedUpdate()
			c.Step(timeout / 2)
		}, wantHealthz: 503, wantLivez: 503},
		{name: "synced after queueing", steps: func(s *Server, c *clocktesting.FakeClock) {
			s.QueuedUpdate()
			c.Step(timeout / 2)
			s.Updated()
			c.Step(timeout)
		}, wantHealthz: 200, wantLivez: 200},
		{name: "node tainted for deletion", steps: func(s *Server, _ *clocktesting.FakeClock) {
			s.SyncNode(&corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: ToBeDeletedTaint, Effect: corev1.TaintEffectNoSchedule}}}})
		}, wantHealthz: 503, wantLivez: 200},
		{name: "node being deleted", steps: func(s *Server, _ *clocktesting.FakeClock) {
			s.SyncNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting}})
		}, wantHealthz: 503, wantLivez: 200},
		{name: "node deleted", steps: func(s *Server, _ *clocktesting.FakeClock) { s.SyncNode(nil) }, wantHealthz: 503, wantLivez: 200},
		{name: "taint removed", steps: func(s *Server, _ *clocktesting.FakeClock) {
			s.SyncNode(&corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: ToBeDeletedTaint}}}})
			s.SyncNode(&corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "other"}}}})
		}, wantHealthz: 200, wantLivez: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := clocktesting.NewFakeClock(t0)
			s := New(timeout, c)
			tc.steps(s, c)
			if got := get(t, s, "/healthz"); got != tc.wantHealthz {
				t.Errorf("/healthz: %d, want %d", got, tc.wantHealthz)
			}
			if got := get(t, s, "/livez"); got != tc.wantLivez {
				t.Errorf("/livez: %d, want %d", got, tc.wantLivez)
			}
		})
	}
}

func get(t *testing.T, s *Server, path string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", path, ct)
	}
	return rec.Code
}

// TestBody checks kube-proxy's JSON fields (times in Go's time.String form,
// as kube-proxy writes them), and that an unhealthy answer
// reports the time of the last successful sync.
func TestBody(t *testing.T) {
	c := clocktesting.NewFakeClock(t0)
	s := New(timeout, c)
	healthz := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "h"}, []string{"code"})
	livez := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l"}, []string{"code"})
	s.CountResponses(healthz, livez)
	s.Updated()
	s.QueuedUpdate()
	c.Step(2 * timeout)

	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	var body struct {
		LastUpdated  string `json:"lastUpdated"`
		CurrentTime  string `json:"currentTime"`
		NodeEligible *bool  `json:"nodeEligible"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if body.LastUpdated != t0.String() || body.CurrentTime != t0.Add(2*timeout).String() || body.NodeEligible == nil || !*body.NodeEligible {
		t.Errorf("body = %s", rec.Body)
	}
	if got := count(t, healthz, "503"); got != 1 {
		t.Errorf("healthz 503 count = %v, want 1", got)
	}
	get(t, s, "/livez")
	if got := count(t, livez, "503"); got != 1 {
		t.Errorf("livez 503 count = %v, want 1", got)
	}
}

func count(t *testing.T, v *prometheus.CounterVec, code string) float64 {
	t.Helper()
	var m dto.Metric
	if err := v.WithLabelValues(code).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
