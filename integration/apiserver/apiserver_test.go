//go:build integration

package apiserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nftproxy/nftproxy/integration/apiserver"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// TestStart starts an API server, writes a Service and an EndpointSlice
// (no controller manager: the slice is ours) and reads them back, once
// through Client and once with the credentials of the Kubeconfig file.
func TestStart(t *testing.T) {
	ns := lab.NewNS(t, "api")
	api := apiserver.Start(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			ClusterIP: "10.96.1.10",
			Ports:     []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := api.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service: %v", err)
	}
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.2"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
	if _, err := api.Client.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create endpointslice: %v", err)
	}

	fromFile := kubeconfigClient(t, api)
	got, err := fromFile.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
	if err != nil {
		t.Fatalf("list endpointslices with the kubeconfig: %v", err)
	}
	var addrs []string
	for _, s := range got.Items {
		for _, ep := range s.Endpoints {
			addrs = append(addrs, ep.Addresses...)
		}
	}
	if diff := cmp.Diff([]string{"10.244.1.2"}, addrs); diff != "" {
		t.Errorf("endpoint addresses (-want +got):\n%s", diff)
	}
	back, err := api.Client.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get service: %v", err)
	}
	if back.Spec.ClusterIP != "10.96.1.10" {
		t.Errorf("clusterIP = %q, want 10.96.1.10", back.Spec.ClusterIP)
	}
}

// kubeconfigClient builds a client from the Kubeconfig file, dialing inside
// the namespace as a process there would.
func kubeconfigClient(t *testing.T, api *apiserver.Server) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", api.Kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	if cfg.Host != "https://"+apiserver.Address {
		t.Fatalf("kubeconfig server = %q, want https://%s", cfg.Host, apiserver.Address)
	}
	cfg.Dial = api.Config.Dial
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRestartAPIServer stops kube-apiserver alone and starts it again: the
// API is gone in between and the objects are back after, from etcd.
func TestRestartAPIServer(t *testing.T) {
	ns := lab.NewNS(t, "api")
	api := apiserver.Start(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}}
	if _, err := api.Client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}

	api.StopAPIServer(t)
	if _, err := api.Client.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{}); err == nil {
		t.Fatal("get with the API server stopped: no error")
	}
	api.StartAPIServer(t)
	if _, err := api.Client.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("get after restart: %v", err)
	}
}
