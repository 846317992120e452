package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Service returns a Service in Namespace with a fixed ClusterIP from
// apiserver.ServiceCIDR; it is a NodePort Service when a port has a node
// port.
func Service(name, clusterIP string, ports ...corev1.ServicePort) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, Ports: ports},
	}
	for _, p := range ports {
		if p.NodePort != 0 {
			svc.Spec.Type = corev1.ServiceTypeNodePort
		}
	}
	return svc
}

// TCPPort is a Service port to BackendPort; nodePort 0 means none.
func TCPPort(name string, port, nodePort int32) corev1.ServicePort {
	return corev1.ServicePort{
		Name:       name,
		Protocol:   corev1.ProtocolTCP,
		Port:       port,
		NodePort:   nodePort,
		TargetPort: intstr.FromInt32(BackendPort),
	}
}

// Slice returns the EndpointSlice "<service>-1" of a Service with one port
// named portName, at BackendPort on each ready address.
func Slice(service, portName string, addrs ...netip.Addr) *discoveryv1.EndpointSlice {
	return NamedSlice(service+"-1", service, portName, addrs...)
}

// NamedSlice is Slice with a name of its own; its address type is that of
// the addresses (IPv6 when the first one is), so a dual-stack Service has
// two, one per family.
func NamedSlice(name, service, portName string, addrs ...netip.Addr) *discoveryv1.EndpointSlice {
	port, proto, ready := int32(BackendPort), corev1.ProtocolTCP, true
	typ := discoveryv1.AddressTypeIPv4
	if len(addrs) > 0 && addrs[0].Is6() {
		typ = discoveryv1.AddressTypeIPv6
	}
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: Namespace,
			Labels:    map[string]string{discoveryv1.LabelServiceName: service},
		},
		AddressType: typ,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{a.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			NodeName:   ptr(NodeName),
		})
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Create creates obj (Namespace, Node, Service or EndpointSlice), failing
// the test on error.
func (e *Env) Create(t testing.TB, obj runtime.Object) {
	t.Helper()
	if err := e.write(obj, false); err != nil {
		t.Fatalf("create: %v", err)
	}
}

// Update replaces a Service or EndpointSlice with obj, which must carry
// the current resourceVersion (as returned by a Get) or none; with none,
// the current one is fetched first.
func (e *Env) Update(t testing.TB, obj runtime.Object) {
	t.Helper()
	if err := e.write(obj, true); err != nil {
		t.Fatalf("update: %v", err)
	}
}

func (e *Env) write(obj runtime.Object, update bool) error {
	opts := metav1.CreateOptions{}
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = e.Kube.CoreV1().Namespaces().Create(e.Ctx, o, opts)
	case *corev1.Node:
		_, err = e.Kube.CoreV1().Nodes().Create(e.Ctx, o, opts)
	case *corev1.Service:
		err = write(e.Ctx, e.Kube.CoreV1().Services(o.Namespace), o, update)
	case *discoveryv1.EndpointSlice:
		err = write(e.Ctx, e.Kube.DiscoveryV1().EndpointSlices(o.Namespace), o, update)
	default:
		return fmt.Errorf("unsupported object %T", obj)
	}
	return err
}

// writer is the part of a typed client (ServiceInterface,
// EndpointSliceInterface) that write uses.
type writer[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// write creates obj through c or, with update, replaces it, first fetching
// the current resourceVersion when obj carries none.
func write[T metav1.Object](ctx context.Context, c writer[T], obj T, update bool) error {
	if !update {
		_, err := c.Create(ctx, obj, metav1.CreateOptions{})
		return err
	}
	if obj.GetResourceVersion() == "" {
		cur, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.SetResourceVersion(cur.GetResourceVersion())
	}
	_, err := c.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}

// DeleteService deletes a Service in Namespace.
func (e *Env) DeleteService(t testing.TB, name string) {
	t.Helper()
	if err := e.Kube.CoreV1().Services(Namespace).Delete(e.Ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete service %s: %v", name, err)
	}
}

// DeleteSlice deletes an EndpointSlice in Namespace.
func (e *Env) DeleteSlice(t testing.TB, name string) {
	t.Helper()
	if err := e.Kube.DiscoveryV1().EndpointSlices(Namespace).Delete(e.Ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete endpointslice %s: %v", name, err)
	}
}

// LoadBalancer makes svc a LoadBalancer Service. Its ingress IP is status,
// written by a cloud controller in a cluster; tests set it with SetIngress.
func LoadBalancer(svc *corev1.Service) *corev1.Service {
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	return svc
}

// SetIngress writes ip as the load-balancer ingress of the Service named
// like svc, as a cloud controller would.
func (e *Env) SetIngress(t testing.TB, svc *corev1.Service, ip string) {
	t.Helper()
	c := e.Kube.CoreV1().Services(svc.Namespace)
	cur, err := c.Get(e.Ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get service %s: %v", svc.Name, err)
	}
	cur.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	if _, err := c.UpdateStatus(e.Ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set ingress of %s: %v", svc.Name, err)
	}
}
