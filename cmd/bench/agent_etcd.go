package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// Creating Services through kube-apiserver costs time in the number of
// Services already there: each ClusterIP allocation, and each release,
// sets the allocator's gauges from a list of every IPAddress object
// (ipallocator's Allocator.Used, Kubernetes 1.37), and no flag turns that
// off. So the benchmark creates the first Service and its slice through
// the API and the others straight in etcd, and deletes them there: copies
// of what the API server stored for the first (its Service, IPAddress and
// EndpointSlice), in its storage encoding and under its keys.
// kube-apiserver takes them from its watch of etcd as it takes its own
// writes; every change made during the runs goes through the API.

// etcdStore writes objects into the API server's etcd, one put each, as
// the API server does.
type etcdStore struct {
	client *http.Client
	proto  runtime.Serializer
	// Copies of the first Service's objects, as the API server stored
	// them, to be renamed.
	svc   *corev1.Service
	ip    *networkingv1.IPAddress
	slice *discoveryv1.EndpointSlice
}

// The API server's etcd key prefixes of the objects written (its default
// --etcd-prefix, /registry).
const (
	serviceKeys = "/registry/services/specs/" + e2e.Namespace + "/"
	sliceKeys   = "/registry/endpointslices/" + e2e.Namespace + "/"
	ipKeys      = "/registry/ipaddresses/"
)

// etcdURL is etcd's gRPC gateway in the API's namespace.
const etcdURL = "http://127.0.0.1:2379/v3/kv/"

// newEtcdStore reads Service i's objects back from the API as templates and
// checks that etcd holds them under the keys the copies are written to.
func newEtcdStore(ctx context.Context, a *api, i int) (*etcdStore, error) {
	tr := &http.Transport{DialContext: a.ns.DialContext, MaxIdleConnsPerHost: a.writers}
	e := &etcdStore{client: &http.Client{Transport: tr, Timeout: time.Minute}, proto: protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)}
	name, ip := serviceName(i), clusterIP(i).String()
	var err error
	if e.svc, err = a.kube.CoreV1().Services(e2e.Namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
		return nil, err
	}
	if e.ip, err = a.kube.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); err != nil {
		return nil, err
	}
	if e.slice, err = a.kube.DiscoveryV1().EndpointSlices(e2e.Namespace).Get(ctx, name+"-1", metav1.GetOptions{}); err != nil {
		return nil, err
	}
	for _, key := range []string{serviceKeys + name, ipKeys + ip, sliceKeys + name + "-1"} {
		if err := e.exists(key); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// createService writes Service i, its IPAddress and its slice with addrs,
// in the order the API server writes them.
func (e *etcdStore) createService(i int, addrs []netip.Addr) error {
	name, ip := serviceName(i), clusterIP(i).String()
	svc := e.svc.DeepCopy()
	svc.ObjectMeta = stored(svc.ObjectMeta, name)
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
	addr := e.ip.DeepCopy()
	addr.ObjectMeta = stored(addr.ObjectMeta, ip)
	addr.Spec.ParentRef.Name = name
	s := e.slice.DeepCopy()
	s.ObjectMeta = stored(s.ObjectMeta, name+"-1")
	s.Labels = map[string]string{discoveryv1.LabelServiceName: name}
	fresh := slice(i, addrs)
	s.Annotations, s.Endpoints = fresh.Annotations, fresh.Endpoints
	if err := e.put(ipKeys+ip, addr, networkingv1.SchemeGroupVersion.WithKind("IPAddress")); err != nil {
		return err
	}
	if err := e.put(serviceKeys+name, svc, corev1.SchemeGroupVersion.WithKind("Service")); err != nil {
		return err
	}
	return e.put(sliceKeys+s.Name, s, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"))
}

// deleteService deletes Service i, its slice and its IPAddress, in the
// order the API server would.
func (e *etcdStore) deleteService(i int) error {
	name := serviceName(i)
	for _, key := range []string{sliceKeys + name + "-1", serviceKeys + name, ipKeys + clusterIP(i).String()} {
		if _, err := e.call("deleterange", map[string][]byte{"key": []byte(key)}); err != nil {
			return err
		}
	}
	return nil
}

// stored is a template's metadata for a new object: its own name and UID,
// created now, without the resourceVersion (etcd's revision stands for it).
func stored(m metav1.ObjectMeta, name string) metav1.ObjectMeta {
	m.Name, m.UID, m.ResourceVersion = name, uuid.NewUUID(), ""
	m.CreationTimestamp = metav1.Now()
	return m
}

// encode is obj in the API server's storage encoding: protobuf with the
// "k8s\x00" magic, kind and version in the envelope.
func (e *etcdStore) encode(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	var b bytes.Buffer
	err := e.proto.Encode(obj, &b)
	return b.Bytes(), err
}

func (e *etcdStore) put(key string, obj runtime.Object, gvk schema.GroupVersionKind) error {
	value, err := e.encode(obj, gvk)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	_, err = e.call("put", map[string][]byte{"key": []byte(key), "value": value})
	return err
}

// exists fails unless etcd holds key.
func (e *etcdStore) exists(key string) error {
	body, err := e.call("range", map[string][]byte{"key": []byte(key)})
	if err != nil {
		return err
	}
	var r struct{ Count string }
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("etcd range %s: %w", key, err)
	}
	if r.Count != "1" {
		return fmt.Errorf("etcd has no %s: the API server stores objects elsewhere", key)
	}
	return nil
}

// call posts a request to the gateway; bytes fields are base64 in its
// JSON, as encoding/json writes []byte.
func (e *etcdStore) call(method string, req map[string][]byte) ([]byte, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	resp, err := e.client.Post(etcdURL+method, "application/json", bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", method, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(body))
	}
	if err != nil {
		return nil, fmt.Errorf("etcd %s %s: %w", method, req["key"], err)
	}
	return body, nil
}

// waitListed waits until the API server lists n Services and n
// EndpointSlices: until its watch cache has taken in what was written
// into etcd.
func (a *api) waitListed(n int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		svcs, slices, err := a.listed()
		if err == nil && svcs == n && slices == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API lists %d Services and %d EndpointSlices, want %d (%v)", svcs, slices, n, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// listed counts the Services and EndpointSlices the API lists, from a list
// of one item each.
func (a *api) listed() (svcs, slices int, err error) {
	one := metav1.ListOptions{Limit: 1}
	s, err := a.kube.CoreV1().Services(e2e.Namespace).List(a.ctx, one)
	if err != nil {
		return 0, 0, err
	}
	es, err := a.kube.DiscoveryV1().EndpointSlices(e2e.Namespace).List(a.ctx, one)
	if err != nil {
		return 0, 0, err
	}
	return listCount(s.ListMeta, len(s.Items)), listCount(es.ListMeta, len(es.Items)), nil
}

func listCount(m metav1.ListMeta, items int) int {
	if m.RemainingItemCount != nil {
		return items + int(*m.RemainingItemCount)
	}
	return items
}
