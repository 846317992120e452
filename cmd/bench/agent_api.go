package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nftproxy/nftproxy/integration/apiserver"
	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// The agent benchmark's cluster, written through a real kube-apiserver:
// Service i is svc-i in namespace e2e, a ClusterIP Service with one TCP
// port (http, 80 -> 8080) and ClusterIP clusterIP(i); its one EndpointSlice
// svc-i-1 holds its endpoints, ready, spread over 100 nodes (this node,
// node-1, has one in a hundred), as the EndpointSlice controller would
// write them, each write carrying endpoints.kubernetes.io/last-change-
// trigger-time. Addresses come from proxy/model/synth's plan.

// endpointNodes is how many nodes the endpoints are spread over.
const endpointNodes = 100

// nodeIPv4 is the node's address in the Node object and on the node
// namespaces' link (no packet is sent to it).
var nodeIPv4 = netip.MustParseAddr("198.51.100.1")

// clusterCIDR is both proxies' cluster CIDR.
var clusterCIDR = lab.ClusterCIDRv4

// api is the API server and what has been written to it so far.
type api struct {
	srv  *apiserver.Server
	ns   *lab.NS
	kube kubernetes.Interface
	ctx  context.Context
	// store writes new Services into etcd, once a first one is made.
	store *etcdStore
	// writers is how many API writes are in flight while loading objects.
	writers int
	// services and endpoints are the cluster the API holds now.
	services, endpoints int
	// moved counts endpoint addresses handed out by changes, so that every
	// change brings an address no endpoint had.
	moved atomic.Int64
}

// benchServers are the benchmark's etcd and kube-apiserver: the tests'
// (integration/apiserver) with these flags on top.
var benchServers = apiserver.Options{
	EtcdArgs: []string{
		// 100,000 Services x 5 take about 0.5 GB; the default quota of
		// 2 GB would leave larger clusters and their churn read-only. The
		// data is on tmpfs and thrown away with the run.
		"--quota-backend-bytes=8589934592",
	},
	APIServerArgs: []string{
		// Room for ClusterIP(i) of 100,000 Services and more (the tests'
		// IPv4 range is a /16); a /12 is the widest kube-apiserver takes.
		"--service-cluster-ip-range=10.96.0.0/12," + apiserver.ServiceCIDRv6.String(),
		// /debug/pprof, to see where the API server's time goes in a run.
		"--profiling=true",
	},
}

// startAPI runs etcd and kube-apiserver in a namespace of their own and
// creates the namespace and the Node object; writers is how many writes
// are in flight while loading objects.
func startAPI(t testing.TB, writers int) *api {
	ns := lab.NewNS(t, "api")
	srv := apiserver.StartWith(t, ns, benchServers)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Protobuf, as controllers talk to the API server: cheaper for it to
	// decode than JSON, over the tens of thousands of writes.
	cfg := rest.CopyConfig(srv.Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	a := &api{srv: srv, ns: ns, kube: kube, ctx: ctx, writers: writers}
	if _, err := a.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e2e.Namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: e2e.NodeName, Labels: map[string]string{corev1.LabelHostname: e2e.NodeName}},
		Spec:       corev1.NodeSpec{PodCIDR: clusterCIDR.String(), PodCIDRs: []string{clusterCIDR.String()}},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIPv4.String()}}},
	}
	if _, err := a.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	return a
}

func serviceName(i int) string { return "svc-" + strconv.Itoa(i) }

// clusterIP i counts up from 10.96.16.0: clear of the API server's own
// "kubernetes" Service at the start of its range (apiserver.ServiceCIDR).
func clusterIP(i int) netip.Addr { return synth.ClusterIP(4096 + i) }

// endpointAddrs are Service i's n endpoint addresses.
func endpointAddrs(i, n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for j := range out {
		out[j] = synth.Endpoint(i*n + j)
	}
	return out
}

// slice is Service i's EndpointSlice holding addrs, stamped with the
// trigger time now.
func slice(i int, addrs []netip.Addr) *discoveryv1.EndpointSlice {
	s := e2e.Slice(serviceName(i), "http", addrs...)
	for j := range s.Endpoints {
		node := "node-" + strconv.Itoa((i*len(addrs)+j)%endpointNodes+1)
		s.Endpoints[j].NodeName = &node
	}
	s.Annotations = map[string]string{corev1.EndpointsLastChangeTriggerTime: time.Now().Format(time.RFC3339Nano)}
	return s
}

// apiLoad is how long resizing the API's cluster to Size took: Objects
// written (created, rewritten or deleted) in Seconds.
type apiLoad struct {
	Size    string
	Objects int
	Seconds float64
}

// resize makes the API hold n Services of k endpoints each: it creates
// the missing ones, rewrites the slices of those with another count and
// deletes the extra ones, a.writers writes at a time. The first Service
// created goes through the API; the others, and deletions, into etcd
// (agent_etcd.go).
func (a *api) resize(t testing.TB, s size) apiLoad {
	n, k := s.services, s.endpoints
	start := time.Now()
	made, err := a.template(n, k)
	if err == nil {
		err = parallel(max(n, a.services), a.writers, func(i int) error { return a.write(i, n, k, made) })
	}
	if err == nil {
		err = a.waitListed(n)
	}
	if err != nil {
		t.Fatalf("resize to %s: %v", s, err)
	}
	l := apiLoad{Size: s.String(), Objects: a.writes(n, k), Seconds: time.Since(start).Seconds()}
	a.services, a.endpoints = n, k
	progress("API holds %d Services x %d endpoints: %s", n, k, l)
	return l
}

// template creates, when there is no etcd store yet and Services are
// missing, the first missing Service through the API and makes the store
// from it. It returns how many Services exist.
func (a *api) template(n, k int) (int, error) {
	if a.store != nil || n <= a.services {
		return a.services, nil
	}
	if err := a.createService(a.services, k); err != nil {
		return 0, err
	}
	var err error
	a.store, err = newEtcdStore(a.ctx, a, a.services)
	return a.services + 1, err
}

// write brings Service i to the size n x k; Services from made on are new.
func (a *api) write(i, n, k, made int) error {
	switch {
	case i >= n:
		return a.store.deleteService(i)
	case i >= made:
		return a.store.createService(i, endpointAddrs(i, k))
	case i >= a.services: // the template, made with k endpoints
		return nil
	case k != a.endpoints:
		return a.setEndpoints(i, endpointAddrs(i, k))
	}
	return nil
}

// writes is how many objects resizing to n Services of k endpoints writes:
// a Service and its slice for each created or deleted, a slice for each
// kept whose count changes.
func (a *api) writes(n, k int) int {
	w := 2 * (max(n-a.services, 0) + max(a.services-n, 0))
	if k != a.endpoints {
		w += min(n, a.services)
	}
	return w
}

func (l apiLoad) String() string {
	return fmt.Sprintf("%d objects in %s (%.0f objects/s)", l.Objects, dur(l.Seconds), l.rate())
}

func (l apiLoad) rate() float64 {
	if l.Seconds == 0 {
		return 0
	}
	return float64(l.Objects) / l.Seconds
}

// parallel calls fn(0) .. fn(n-1), writers at a time, and returns the
// first error.
func parallel(n, writers int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range writers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func (a *api) createService(i, k int) error {
	svc := e2e.Service(serviceName(i), clusterIP(i).String(), e2e.TCPPort("http", 80, 0))
	if _, err := a.kube.CoreV1().Services(e2e.Namespace).Create(a.ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %d: %w", i, err)
	}
	if _, err := a.kube.DiscoveryV1().EndpointSlices(e2e.Namespace).Create(a.ctx, slice(i, endpointAddrs(i, k)), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create endpointslice %d: %w", i, err)
	}
	return nil
}

// setEndpoints replaces Service i's endpoints with addrs and stamps the
// slice with the trigger time now, as the EndpointSlice controller does
// after a Pod change. A merge patch replaces the whole endpoint list and
// needs no resourceVersion.
func (a *api) setEndpoints(i int, addrs []netip.Addr) error {
	s := slice(i, addrs)
	patch, err := json.Marshal(map[string]any{
		"metadata":  map[string]any{"annotations": s.Annotations},
		"endpoints": s.Endpoints,
	})
	if err != nil {
		return err
	}
	_, err = a.kube.DiscoveryV1().EndpointSlices(e2e.Namespace).Patch(a.ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("update endpointslice %d: %w", i, err)
	}
	return nil
}

// movedAddr is an endpoint address no endpoint has had before.
func (a *api) movedAddr() netip.Addr { return synth.MovedEndpoint(int(a.moved.Add(1))) }
