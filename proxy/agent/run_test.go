package agent

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// TestRunWaitsForInformers holds the EndpointSlice list back (it fails
// until released; the reflector retries): no sync may run before it is
// answered, and the first sync sees every object.
func TestRunWaitsForInformers(t *testing.T) {
	h := newHarness(t, node(), service("web"), slice("web-1", "web", "10.0.1.1"))
	servicesListed := make(chan struct{}, 10)
	var released atomic.Bool
	// Reactors run under the fake clientset's lock: they must not block.
	h.client.PrependReactor("list", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
		select {
		case servicesListed <- struct{}{}:
		default:
		}
		return false, nil, nil
	})
	h.client.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !released.Load() {
			return true, nil, errors.New("not yet")
		}
		return false, nil, nil
	})
	h.dp.onSync = func() {
		if !released.Load() {
			t.Error("sync before the EndpointSlice informer synced")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.agent.Run(ctx) }()

	<-servicesListed
	// Give a wrong agent the chance to sync from Services alone; a correct
	// one passes whatever this pause is.
	time.Sleep(50 * time.Millisecond)
	released.Store(true)

	in := <-h.dp.synced
	if diff := cmp.Diff([]string{"default/web"}, serviceKeys(in.Snapshot)); diff != "" {
		t.Errorf("first sync Services (-want +got):\n%s", diff)
	}
	if len(in.Snapshot.Slices) != 1 || !in.Full {
		t.Errorf("first sync: %d slices, full %v; want 1, full", len(in.Snapshot.Slices), in.Full)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v, want nil (rules stay, exit 0)", err)
	}
}

// TestHealthFollowsSyncs: a change queued and not synced for 2 x
// syncPeriod makes /healthz fail; a sync makes it pass again.
func TestHealthFollowsSyncs(t *testing.T) {
	h := newHarness(t, node(), service("web"))
	h.start()
	h.queueAfterSync()
	h.clock.Step(2 * h.agent.cfg.Proxy.SyncPeriod.Duration)
	if h.health.Healthy() {
		t.Error("healthy with a change queued for 2 x syncPeriod")
	}
	if _, err := h.sync(); err != nil {
		t.Fatal(err)
	}
	if !h.health.Healthy() {
		t.Error("unhealthy after a successful sync")
	}
}

// TestNodeTaintFailsHealthz: the Node informer feeds /healthz.
func TestNodeTaintFailsHealthz(t *testing.T) {
	h := newHarness(t, node())
	h.start()
	if code := getCode(h, "/healthz"); code != 200 {
		t.Fatalf("/healthz = %d before the taint, want 200", code)
	}
	tainted := node()
	tainted.Spec.Taints = append(tainted.Spec.Taints, corev1Taint("ToBeDeletedByClusterAutoscaler"))
	_, _ = h.client.CoreV1().Nodes().Update(t.Context(), tainted, metav1.UpdateOptions{})
	h.eventually("/healthz 503", func() bool { return getCode(h, "/healthz") == 503 })
	if code := getCode(h, "/livez"); code != 200 {
		t.Errorf("/livez = %d, want 200: the agent itself is fine", code)
	}
}

// TestFirstSyncHasEveryObject: the first sync waits for the handlers to
// have recorded the initial lists, not only for the informers' stores (the
// handlers lag behind them); otherwise Services would be programmed
// without their endpoints.
func TestFirstSyncHasEveryObject(t *testing.T) {
	const n = 500
	objs := []runtime.Object{node()}
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		objs = append(objs, service(name), slice(name+"-1", name, "10.0.1.1"))
	}
	// Handlers slower than the store: the informers sync well before the
	// handlers are through.
	beforeRecord = func() { time.Sleep(time.Millisecond) }
	t.Cleanup(func() { beforeRecord = func() {} })
	h := newHarness(t, objs...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.agent.Run(ctx) }()
	in := <-h.dp.synced
	cancel()
	<-done
	if len(in.Snapshot.Services) != n || len(in.Snapshot.Slices) != n {
		t.Errorf("first sync: %d Services, %d slices; want %d each", len(in.Snapshot.Services), len(in.Snapshot.Slices), n)
	}
}
