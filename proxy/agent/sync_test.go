package agent

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
)

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// TestChangedKeys follows a sequence of API changes and checks what each
// sync hands the data plane.
func TestChangedKeys(t *testing.T) {
	h := newHarness(t, node(), service("web"), service("api"), slice("web-1", "web", "10.0.1.1"), slice("api-1", "api", "10.0.2.1"))
	h.start()
	ctx := t.Context()
	steps := []struct {
		name        string
		change      func()
		pending     int
		wantChanged []string
		wantFull    bool
	}{
		{name: "first sync: everything, full", wantChanged: []string{"default/api", "default/web"}, wantFull: true},
		{name: "endpoint of web", change: func() {
			_, _ = h.client.DiscoveryV1().EndpointSlices("default").Update(ctx, slice("web-1", "web", "10.0.1.1", "10.0.1.2"), metav1.UpdateOptions{})
		}, pending: 1, wantChanged: []string{"default/web"}},
		{name: "nothing changed", wantChanged: nil},
		{name: "api deleted", change: func() {
			_ = h.client.CoreV1().Services("default").Delete(ctx, "api", metav1.DeleteOptions{})
		}, pending: 1, wantChanged: []string{"default/api"}},
		{name: "a new Service and its slice", change: func() {
			_, _ = h.client.CoreV1().Services("default").Create(ctx, service("db"), metav1.CreateOptions{})
			_, _ = h.client.DiscoveryV1().EndpointSlices("default").Create(ctx, slice("db-1", "db", "10.0.3.1"), metav1.CreateOptions{})
		}, pending: 2, wantChanged: []string{"default/db"}},
		{name: "an annotation nftproxy does not read: no change", change: func() {
			_, _ = h.client.CoreV1().Services("default").Update(ctx, service("web", func(s *corev1.Service) {
				s.Annotations = map[string]string{"note": "x"}
			}), metav1.UpdateOptions{})
			// Handlers of one informer run in order: once db's change is
			// recorded, web's update has been handled.
			_, _ = h.client.CoreV1().Services("default").Update(ctx, service("db", func(s *corev1.Service) {
				s.Spec.Ports[0].Port = 81
			}), metav1.UpdateOptions{})
		}, pending: 1, wantChanged: []string{"default/db"}},
		{name: "syncPeriod later: full", change: func() { h.clock.Step(h.agent.cfg.Proxy.SyncPeriod.Duration) }, wantFull: true},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		h.pendingChanges(st.pending)
		in, err := h.sync()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(st.wantChanged, keys(in.Changed), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: Changed (-want +got):\n%s", st.name, diff)
		}
		if in.Full != st.wantFull {
			t.Errorf("%s: Full = %v, want %v", st.name, in.Full, st.wantFull)
		}
	}
}

// TestSnapshotAndNode checks what the first sync programs: the Services
// nftproxy owns (not headless ones, not another proxy's), and the Node.
func TestSnapshotAndNode(t *testing.T) {
	h := newHarness(t,
		node(),
		service("web"),
		service("headless", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"} }),
		service("other", func(s *corev1.Service) { s.Labels = map[string]string{"service.kubernetes.io/service-proxy-name": "x"} }),
		slice("web-1", "web", "10.0.1.1"),
	)
	h.start()
	in, err := h.sync()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"default/web"}, serviceKeys(in.Snapshot)); diff != "" {
		t.Errorf("Services (-want +got):\n%s", diff)
	}
	if len(in.Snapshot.Slices) != 1 || in.Node.Name != "node-1" || len(in.Node.IPs) != 1 || in.Node.IPs[0].String() != "192.0.2.1" {
		t.Errorf("slices %v, node %+v", in.Snapshot.Slices, in.Node)
	}
	if in.Options.MasqueradeBit != 14 {
		t.Errorf("Options = %+v, want the configuration's", in.Options)
	}
}

// recordingHook keeps what each AfterSync got.
type recordingHook struct{ prev, cur []*model.Snapshot }

func (r *recordingHook) AfterSync(prev, cur *model.Snapshot, _ model.Node) {
	r.prev, r.cur = append(r.prev, prev), append(r.cur, cur)
}

func TestHooksAfterSuccessOnly(t *testing.T) {
	h := newHarness(t, node(), service("web"))
	hook := &recordingHook{}
	h.agent.cfg.Hooks = append(h.agent.cfg.Hooks, hook)
	h.start()
	h.dp.then(dataplane.Result{}, nil)
	h.dp.then(dataplane.Result{}, errRejected)
	h.dp.then(dataplane.Result{}, nil)
	for range 3 {
		_, _ = h.sync()
	}
	if len(hook.cur) != 2 {
		t.Fatalf("hook called %d times, want 2 (not after the failure)", len(hook.cur))
	}
	if hook.prev[0] != nil || hook.prev[1] != hook.cur[0] {
		t.Errorf("prev = %p, %p; want nil, then the first snapshot %p", hook.prev[0], hook.prev[1], hook.cur[0])
	}
}

// TestFailureRetriesFull: a failed sync keeps its changes pending and the
// next sync is full.
func TestFailureRetriesFull(t *testing.T) {
	h := newHarness(t, node(), service("web"))
	h.start()
	h.queueAfterSync()
	h.dp.then(dataplane.Result{Families: []compile.FamilyStatus{{Family: nft.IPv4}}}, errRejected)
	if _, err := h.sync(); err == nil {
		t.Fatal("sync succeeded, want the data plane's error")
	}
	if got := gauge(t, h.metrics.ServiceChangesPending); got != 1 {
		t.Errorf("service changes pending after failure = %v, want 1", got)
	}
	in, err := h.sync()
	if err != nil {
		t.Fatal(err)
	}
	if !in.Full || !in.Changed["default/api"] {
		t.Errorf("after a failure: Full = %v, Changed = %v; want full, with default/api", in.Full, in.Changed)
	}
	if got := counter(t, h.metrics.SyncFailures.WithLabelValues("IPv4")); got != 1 {
		t.Errorf("IPv4 sync failures = %v, want 1", got)
	}
	if got := gauge(t, h.metrics.ServiceChangesPending); got != 0 {
		t.Errorf("service changes pending after success = %v, want 0", got)
	}
}

// TestFailureCounterFromFirstSync: a successful sync exposes the failure
// counter of each family it programmed at 0, so that an alert on its
// increase sees the first failure.
func TestFailureCounterFromFirstSync(t *testing.T) {
	h := newHarness(t, node(), service("web"))
	h.start()
	h.dp.then(dataplane.Result{Families: []compile.FamilyStatus{{Family: nft.IPv4}}}, nil)
	if _, err := h.sync(); err != nil {
		t.Fatal(err)
	}
	families, err := h.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "kubeproxy_sync_proxy_rules_nftables_sync_failures_total" {
			continue
		}
		if len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 0 {
			t.Fatalf("sync failures after a successful sync: %v, want one series at 0", f.GetMetric())
		}
		return
	}
	t.Error("no kubeproxy_sync_proxy_rules_nftables_sync_failures_total after a successful sync")
}

func TestEventsOnce(t *testing.T) {
	bad := service("bad", func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "ICMP" })
	h := newHarness(t, node(), service("web"), bad)
	h.start()
	problem := dataplane.Result{Problems: []compile.Problem{{Object: "Service default/web", Field: "spec.sessionAffinity", Detail: "not supported"}}}
	h.dp.then(problem, nil)
	h.dp.then(problem, nil)
	in, _ := h.sync()
	_, _ = h.sync()
	// Updating the bad Service without fixing it: no new event.
	bad.Labels = map[string]string{"touched": "yes"}
	_, _ = h.client.CoreV1().Services("default").Update(t.Context(), bad, metav1.UpdateOptions{})
	// Handlers of one informer run in order: once api is recorded, the
	// update of bad has been handled.
	_, _ = h.client.CoreV1().Services("default").Create(t.Context(), service("api"), metav1.CreateOptions{})
	h.pendingChanges(1)
	want := []string{
		`Warning Invalid not programmed: spec.ports[0].protocol: unsupported protocol "ICMP"`,
		"Warning NotProgrammed not programmed: spec.sessionAffinity: not supported",
	}
	if diff := cmp.Diff(want, h.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"default/web"}, serviceKeys(in.Snapshot)); diff != "" {
		t.Errorf("the valid Service is still programmed (-want +got):\n%s", diff)
	}
}

// written is what c reports to a scrape.
func written(t *testing.T, c prometheus.Metric) *dto.Metric {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func gauge(t *testing.T, g prometheus.Gauge) float64 {
	return written(t, g).GetGauge().GetValue()
}

func counter(t *testing.T, c prometheus.Counter) float64 {
	return written(t, c).GetCounter().GetValue()
}

// TestMetricsAfterSync: network programming latency from the slice's
// last-change-trigger-time, under the slice's family; sync durations and
// times under each family the sync programmed; Service ports without a
// local endpoint; transaction size, repairs.
func TestMetricsAfterSync(t *testing.T) {
	h := newHarness(t, node(), service("web"))
	h.start()
	if _, err := h.sync(); err != nil { // full, both families (the fake says none)
		t.Fatal(err)
	}
	sl := slice("web-1", "web", "10.0.1.1")
	sl.Annotations = map[string]string{corev1.EndpointsLastChangeTriggerTime: t0.Add(time.Second).Format(time.RFC3339Nano)}
	_, _ = h.client.DiscoveryV1().EndpointSlices("default").Create(t.Context(), sl, metav1.CreateOptions{})
	h.pendingChanges(1)
	h.clock.Step(3 * time.Second)
	h.dp.then(dataplane.Result{Ops: 13, Bytes: 4000, Repaired: true, Families: []compile.FamilyStatus{
		{Family: nft.IPv4, NoLocalInternal: 2, NoLocalExternal: 1}}}, nil)
	if _, err := h.sync(); err != nil {
		t.Fatal(err)
	}
	m := h.metrics
	v4, v6 := func(v *prometheus.HistogramVec) *dto.Histogram { return histogram(t, v.WithLabelValues("IPv4")) },
		func(v *prometheus.HistogramVec) *dto.Histogram { return histogram(t, v.WithLabelValues("IPv6")) }
	checks := []struct {
		name      string
		got, want float64
	}{
		{"network programming samples, IPv4", float64(v4(m.NetworkProgramming).GetSampleCount()), 1},
		{"network programming seconds, IPv4", v4(m.NetworkProgramming).GetSampleSum(), 2},
		{"network programming samples, IPv6", float64(v6(m.NetworkProgramming).GetSampleCount()), 0},
		{"partial syncs, IPv4", float64(v4(m.SyncPartialDuration).GetSampleCount()), 1},
		{"partial syncs, IPv6 (no table)", float64(v6(m.SyncPartialDuration).GetSampleCount()), 0},
		{"full syncs, IPv6", float64(v6(m.SyncFullDuration).GetSampleCount()), 1},
		{"syncs, IPv4", float64(v4(m.SyncDuration).GetSampleCount()), 2},
		{"no local endpoints, internal", gauge(t, m.NoLocalEndpoints.WithLabelValues("internal", "IPv4")), 2},
		{"no local endpoints, external", gauge(t, m.NoLocalEndpoints.WithLabelValues("external", "IPv4")), 1},
		{"transaction ops", histogram(t, m.TransactionOps).GetSampleSum(), 1 + 13},
		{"transaction bytes", histogram(t, m.TransactionBytes).GetSampleSum(), 4000},
		{"repairs", counter(t, m.Repairs), 1},
		{"last sync, IPv4", gauge(t, m.LastSync.WithLabelValues("IPv4")), float64(t0.Add(3 * time.Second).Unix())},
		{"last sync, IPv6", gauge(t, m.LastSync.WithLabelValues("IPv6")), float64(t0.Unix())},
		{"endpoint changes", counter(t, m.EndpointChangesTotal), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestNetworkProgrammingOncePerChange: 20 updates of an EndpointSlice, each
// with the EndpointSlice controller's last-change-trigger-time, are 20
// observations of the network programming latency, whether they are synced
// one by one or several at once, as kube-proxy records them.
func TestNetworkProgrammingOncePerChange(t *testing.T) {
	h := newHarness(t, node(), service("web"))
	h.start()
	if _, err := h.sync(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 20 {
		sl := slice("web-1", "web", fmt.Sprintf("10.0.1.%d", i+1))
		sl.Annotations = map[string]string{corev1.EndpointsLastChangeTriggerTime: h.clock.Now().Format(time.RFC3339Nano)}
		var err error
		if i == 0 {
			_, err = h.client.DiscoveryV1().EndpointSlices("default").Create(ctx, sl, metav1.CreateOptions{})
		} else {
			_, err = h.client.DiscoveryV1().EndpointSlices("default").Update(ctx, sl, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		h.eventually("the change recorded", func() bool { return counter(t, h.metrics.EndpointChangesTotal) == float64(i+1) })
		h.clock.Step(time.Second)
		if i%5 == 4 { // five changes per sync
			if _, err := h.sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := histogram(t, h.metrics.NetworkProgramming.WithLabelValues("IPv4")).GetSampleCount(); got != 20 {
		t.Errorf("20 changes: %d observations, want 20", got)
	}
}

func histogram(t *testing.T, h prometheus.Observer) *dto.Histogram {
	return written(t, h.(prometheus.Metric)).GetHistogram()
}

// TestRepairsReported: the data plane's own repairs are counted and
// logged; a failed one asks the runner for a sync.
func TestRepairsReported(t *testing.T) {
	h := newHarness(t, node(), service("web"))
	h.start()
	reps := []dataplane.Repair{
		{Ops: 3},
		{Ops: 0, ReadBack: true}, // lost notifications, tables intact
		{Ops: 5, ReadBack: true}, // lost notifications, repaired
		{Err: errRejected},       // failed: the next sync replaces
		{Ops: 0},                 // nothing to count
	}
	h.clock.Step(time.Second)
	for _, rep := range reps {
		h.agent.repaired(rep)
		if rep.Err == nil {
			h.clock.Step(time.Second)
		}
	}
	if got := counter(t, h.metrics.Repairs); got != 2 {
		t.Errorf("repairs = %v, want 2", got)
	}
	if got := counter(t, h.metrics.NotificationsLost); got != 2 {
		t.Errorf("notifications lost = %v, want 2", got)
	}
	if got, want := gauge(t, h.metrics.LastQueued.WithLabelValues("IPv4")), float64(t0.Add(4*time.Second).Unix()); got != want {
		t.Errorf("last queued = %v, want %v: a failed repair, and only it, queues a sync", got, want)
	}
}
