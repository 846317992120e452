package agent

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/healthz"
	"github.com/nftproxy/nftproxy/proxy/metrics"
	"github.com/nftproxy/nftproxy/proxy/model"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeDataplane records every Input and answers with queued results.
type fakeDataplane struct {
	mu      sync.Mutex
	inputs  []dataplane.Input
	results []fakeResult
	synced  chan dataplane.Input
	// onSync, if set, runs at the start of every Sync.
	onSync func()
}

type fakeResult struct {
	res dataplane.Result
	err error
}

func newFakeDataplane() *fakeDataplane {
	return &fakeDataplane{synced: make(chan dataplane.Input, 100)}
}

func (f *fakeDataplane) Sync(in dataplane.Input) (dataplane.Result, error) {
	if f.onSync != nil {
		f.onSync()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	r := fakeResult{res: dataplane.Result{Full: in.Full || len(f.inputs) == 1, Ops: 1}}
	if len(f.results) > 0 {
		r, f.results = f.results[0], f.results[1:]
	}
	f.synced <- in
	return r.res, r.err
}

// then queues the answer of a later Sync.
func (f *fakeDataplane) then(res dataplane.Result, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results = append(f.results, fakeResult{res, err})
}

var errRejected = errors.New("transaction rejected")

// harness is an Agent on a fake clientset and a fake clock; tests call
// sync directly instead of running the runner loop.
type harness struct {
	t        *testing.T
	client   *fake.Clientset
	clock    *clocktesting.FakeClock
	dp       *fakeDataplane
	rec      *record.FakeRecorder
	metrics  *metrics.Metrics
	health   *healthz.Server
	agent    *Agent
	watching chan string // resources whose watch started
}

func newHarness(t *testing.T, objs ...runtime.Object) *harness {
	h := &harness{
		t:        t,
		client:   fake.NewClientset(objs...),
		clock:    clocktesting.NewFakeClock(t0),
		dp:       newFakeDataplane(),
		rec:      record.NewFakeRecorder(100),
		metrics:  metrics.New(),
		watching: make(chan string, 10),
	}
	// A fake clientset drops changes made between an informer's list and
	// its watch; tests change objects only once every watch is running.
	h.client.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		select { // reactors run under the fake's lock: never block
		case h.watching <- a.GetResource().Resource:
		default:
		}
		return false, nil, nil
	})
	cfg := config.Default()
	h.health = healthz.New(2*cfg.SyncPeriod.Duration, h.clock)
	h.agent = New(Config{
		Client: h.client, NodeName: "node-1", Proxy: cfg, Dataplane: h.dp,
		Recorder: h.rec, Metrics: h.metrics, Health: h.health, Clock: h.clock,
	})
	return h
}

// start starts the informers and waits for their lists and watches.
func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	if err := h.agent.start(ctx); err != nil {
		h.t.Fatal(err)
	}
	for range 4 { // Services, EndpointSlices, the Node, ServiceCIDRs
		<-h.watching
	}
}

// sync runs one sync and returns the Input the data plane got.
func (h *harness) sync() (dataplane.Input, error) {
	h.t.Helper()
	err := h.agent.sync()
	return <-h.dp.synced, err
}

// eventually waits for cond, which informer handlers make true
// asynchronously. The limit only stops a hung test; it measures nothing.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// pendingChanges waits until the handlers recorded n Services as changed.
func (h *harness) pendingChanges(n int) {
	h.t.Helper()
	h.eventually("recorded changes", func() bool {
		s, e := h.agent.tracker.Pending()
		return s+e >= n
	})
}

// queueAfterSync syncs, then creates the Service api and waits for the
// handlers to record it: one change pending since the last sync.
func (h *harness) queueAfterSync() {
	h.t.Helper()
	if _, err := h.sync(); err != nil {
		h.t.Fatal(err)
	}
	_, _ = h.client.CoreV1().Services("default").Create(h.t.Context(), service("api"), metav1.CreateOptions{})
	h.pendingChanges(1)
}

func (h *harness) events() []string { return drainEvents(h.rec) }

func service(name string, edits ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
	for _, e := range edits {
		e(s)
	}
	return s
}

func slice(name, svc string, ips ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(8080))}},
	}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
	}
	return s
}

func node(edits ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.1"}}},
	}
	for _, e := range edits {
		e(n)
	}
	return n
}

func serviceCIDR(name string, cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

func ptr[T any](v T) *T { return &v }

func serviceKeys(s *model.Snapshot) []string {
	var out []string
	for _, svc := range s.Services {
		out = append(out, svc.Key())
	}
	return out
}

func corev1Taint(key string) corev1.Taint {
	return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule}
}

func getCode(h *harness, path string) int {
	rec := httptest.NewRecorder()
	h.health.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code
}
