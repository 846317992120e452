// Package healthz serves /healthz and /livez with kube-proxy's meaning, so
// that load balancers and liveness probes set up for kube-proxy keep working:
//
//   - unhealthy (503) when a change queued for the data plane has waited
//     longer than the timeout (kube-proxy: 2 x syncPeriod) without a
//     successful sync;
//   - /healthz is also 503 while this node is being deleted or is tainted
//     ToBeDeletedByClusterAutoscaler, so that cloud load balancers drain it
//     before it goes; /livez ignores the Node (the process is fine).
//
// Both answer with kube-proxy's JSON body.
package healthz

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// ToBeDeletedTaint is the taint the Cluster Autoscaler puts on a node it is
// about to remove.
const ToBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// Server tracks the agent's health. The zero value is not usable; use New.
type Server struct {
	clock   clock.Clock
	timeout time.Duration
	// healthzTotal and livezTotal count responses by code; nil: not counted.
	healthzTotal, livezTotal *prometheus.CounterVec

	mu           sync.Mutex
	lastUpdated  time.Time
	oldestQueued time.Time // zero: nothing waiting
	nodeEligible bool
}

// New returns a Server that reports unhealthy once a queued change has
// waited timeout. c nil means the real clock.
func New(timeout time.Duration, c clock.Clock) *Server {
	if c == nil {
		c = clock.RealClock{}
	}
	// The node counts as eligible until the Node object says otherwise, as
	// in kube-proxy: a starting agent must not fail its probes for lack of
	// a Node event.
	return &Server{clock: c, timeout: timeout, nodeEligible: true}
}

// CountResponses makes the handlers count their responses by HTTP code.
func (s *Server) CountResponses(healthz, livez *prometheus.CounterVec) {
	s.healthzTotal, s.livezTotal = healthz, livez
}

// QueuedUpdate records that a change waits for the data plane; the oldest
// such change counts.
func (s *Server) QueuedUpdate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oldestQueued.IsZero() {
		s.oldestQueued = s.clock.Now()
	}
}

// Updated records a successful sync: everything queued before it is done.
func (s *Server) Updated() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oldestQueued = time.Time{}
	s.lastUpdated = s.clock.Now()
}

// SyncNode updates eligibility from this node's Node object; nil means the
// Node was deleted.
func (s *Server) SyncNode(n *corev1.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodeEligible = nodeEligible(n)
}

func nodeEligible(n *corev1.Node) bool {
	if n == nil || !n.DeletionTimestamp.IsZero() {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Key == ToBeDeletedTaint {
			return false
		}
	}
	return true
}

// status is one health reading.
type status struct {
	healthy      bool // queued changes are not late
	nodeEligible bool
	lastUpdated  time.Time
	now          time.Time
}

func (s *Server) status() status {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	late := !s.oldestQueued.IsZero() && now.Sub(s.oldestQueued) >= s.timeout
	return status{healthy: !late, nodeEligible: s.nodeEligible, lastUpdated: s.lastUpdated, now: now}
}

// Healthy reports the /livez answer: no queued change is late.
func (s *Server) Healthy() bool { return s.status().healthy }

// Handler serves /healthz and /livez.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { s.serve(w, true) })
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { s.serve(w, false) })
	return mux
}

// serve writes kube-proxy's body. As kube-proxy does for compatibility with
// older releases, a healthy answer reports lastUpdated as the current time.
func (s *Server) serve(w http.ResponseWriter, withNode bool) {
	st := s.status()
	healthy, counter := st.healthy, s.livezTotal
	if withNode {
		healthy, counter = healthy && st.nodeEligible, s.healthzTotal
	}
	code := http.StatusServiceUnavailable
	if healthy {
		code, st.lastUpdated = http.StatusOK, st.now
	}
	if counter != nil {
		counter.WithLabelValues(fmt.Sprint(code)).Inc()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	if withNode {
		fmt.Fprintf(w, `{"lastUpdated": %q,"currentTime": %q, "nodeEligible": %v}`, st.lastUpdated, st.now, st.nodeEligible)
		return
	}
	fmt.Fprintf(w, `{"lastUpdated": %q,"currentTime": %q}`, st.lastUpdated, st.now)
}
