package kube

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// service returns a valid ClusterIP Service default/web with one TCP port,
// changed by each of edits.
func service(edits ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  "10.0.0.10",
			ClusterIPs: []string{"10.0.0.10"},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	for _, e := range edits {
		e(svc)
	}
	return svc
}

// modelService is the conversion of service(), changed by each of edits.
func modelService(edits ...func(*model.Service)) *model.Service {
	svc := &model.Service{
		Namespace:  "default",
		Name:       "web",
		Type:       model.ClusterIP,
		ClusterIPs: addrs("10.0.0.10"),
		Ports:      []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: 80}},
	}
	for _, e := range edits {
		e(svc)
	}
	return svc
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// cmpAddrs compares netip values by their text.
var cmpAddrs = cmp.Options{
	cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
	cmpopts.EquateEmpty(),
}

// checkErr fails t unless err's text contains each of want, in one line
// each; want empty means err must be nil.
func checkErr(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("got no error, want %q", want)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Errorf("got %d error lines, want %d:\n%v", len(lines), len(want), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not contain %q:\n%v", w, err)
		}
	}
}

func TestConvertService(t *testing.T) {
	tests := []struct {
		name    string
		svc     *corev1.Service
		want    *model.Service
		wantErr []string
	}{
		{name: "cluster IP", svc: service(), want: modelService()},
		{
			name: "defaults: empty type and protocol, clusterIP only",
			svc: service(func(s *corev1.Service) {
				s.Spec.Type = ""
				s.Spec.ClusterIPs = nil
			}),
			want: modelService(),
		},
		{
			name: "dual stack",
			svc: service(func(s *corev1.Service) {
				s.Spec.ClusterIPs = []string{"10.0.0.10", "fd00::10"}
			}),
			want: modelService(func(s *model.Service) { s.ClusterIPs = addrs("10.0.0.10", "fd00::10") }),
		},
		{
			name: "load balancer",
			svc: service(func(s *corev1.Service) {
				s.Spec.Type = corev1.ServiceTypeLoadBalancer
				s.Spec.Ports = []corev1.ServicePort{
					{Name: "http", Port: 80, NodePort: 30080},
					{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, NodePort: 30053},
				}
				s.Spec.ExternalIPs = []string{"192.0.2.1"}
				s.Spec.LoadBalancerSourceRanges = []string{" 198.51.100.0/24", "203.0.113.7", "2001:db8::/32 ", "10.1.2.3/8"}
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 32000
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
					{IP: "192.0.2.10"},
					{IP: "192.0.2.11", IPMode: ptr(corev1.LoadBalancerIPModeVIP)},
					{IP: "192.0.2.12", IPMode: ptr(corev1.LoadBalancerIPModeProxy)},
					{Hostname: "lb.example.com"},
				}
			}),
			want: modelService(func(s *model.Service) {
				s.Type = model.LoadBalancer
				s.Ports = []model.ServicePort{
					{Name: "http", Protocol: model.TCP, Port: 80, NodePort: 30080},
					{Name: "dns", Protocol: model.UDP, Port: 53, NodePort: 30053},
				}
				s.ExternalIPs = addrs("192.0.2.1")
				s.LoadBalancerIPs = addrs("192.0.2.10", "192.0.2.11")
				s.LoadBalancerSourceRanges = []netip.Prefix{
					netip.MustParsePrefix("198.51.100.0/24"),
					netip.MustParsePrefix("203.0.113.7/32"),
					netip.MustParsePrefix("2001:db8::/32"),
					netip.MustParsePrefix("10.0.0.0/8"),
				}
				s.ExternalLocal = true
				s.HealthCheckNodePort = 32000
			}),
		},
		{
			name: "node ports and ingress ignored for ClusterIP",
			svc: service(func(s *corev1.Service) {
				s.Spec.Ports[0].NodePort = 30080
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
			}),
			want: modelService(),
		},
		{
			name: "external policy counts for ClusterIP with external IPs",
			svc: service(func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"192.0.2.1"}
				s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			}),
			want: modelService(func(s *model.Service) {
				s.ExternalIPs = addrs("192.0.2.1")
				s.ExternalLocal = true
			}),
		},
		{
			name: "internal policy, affinity, traffic distribution",
			svc: service(func(s *corev1.Service) {
				s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyLocal)
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				s.Spec.TrafficDistribution = ptr("PreferSameZone")
			}),
			want: modelService(func(s *model.Service) {
				s.InternalLocal = true
				s.AffinitySeconds = 10800
				s.TrafficDistribution = "PreferSameZone"
			}),
		},
		{
			name: "affinity timeout",
			svc: service(func(s *corev1.Service) {
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
					ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr[int32](60)},
				}
			}),
			want: modelService(func(s *model.Service) { s.AffinitySeconds = 60 }),
		},
		{
			name: "single unnamed port",
			svc: service(func(s *corev1.Service) {
				s.Spec.Ports = []corev1.ServicePort{{Port: 80}}
			}),
			want: modelService(func(s *model.Service) {
				s.Ports = []model.ServicePort{{Protocol: model.TCP, Port: 80}}
			}),
		},
		{
			name: "same port, different protocols",
			svc: service(func(s *corev1.Service) {
				s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 53}, {Name: "b", Port: 53, Protocol: corev1.ProtocolUDP}}
			}),
			want: modelService(func(s *model.Service) {
				s.Ports = []model.ServicePort{
					{Name: "a", Protocol: model.TCP, Port: 53},
					{Name: "b", Protocol: model.UDP, Port: 53},
				}
			}),
		},
	}
	tests = append(tests, skippedServiceTests...)
	tests = append(tests, invalidServiceTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConvertService(tc.svc)
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got, cmpAddrs); diff != "" {
				t.Errorf("ConvertService() (-want +got):\n%s", diff)
			}
		})
	}
}
