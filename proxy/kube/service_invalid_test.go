package kube

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// skippedServiceTests convert to (nil, nil).
var skippedServiceTests = []struct {
	name    string
	svc     *corev1.Service
	want    *model.Service
	wantErr []string
}{
	{name: "headless", svc: service(func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
	})},
	{name: "headless, clusterIPs only", svc: service(func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "", []string{"None"}
	})},
	{name: "ExternalName", svc: service(func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeExternalName
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
	})},
	{name: "other proxy", svc: service(func(s *corev1.Service) {
		s.Labels = map[string]string{LabelServiceProxyName: ""}
	})},
	{name: "no cluster IP", svc: service(func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
	})},
	{name: "skipped even when invalid", svc: service(func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
		s.Spec.Ports[0].Port = 0
	})},
}

// invalidServiceTests each expect one error line per entry of wantErr.
var invalidServiceTests = []struct {
	name    string
	svc     *corev1.Service
	want    *model.Service
	wantErr []string
}{
	{
		name: "bad cluster IP",
		svc: service(func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.300", []string{"10.0.0.300"}
		}),
		wantErr: []string{`Service default/web: spec.clusterIPs[0]: invalid IP address "10.0.0.300"`},
	},
	{
		name:    "bad clusterIP fallback",
		svc:     service(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "x", nil }),
		wantErr: []string{`spec.clusterIP: invalid IP address "x"`},
	},
	{
		name:    "clusterIP mismatch",
		svc:     service(func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.11" }),
		wantErr: []string{`spec.clusterIP: "10.0.0.11" does not match spec.clusterIPs[0] "10.0.0.10"`},
	},
	{
		name:    "same family twice",
		svc:     service(func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.0.0.10", "10.0.0.11"} }),
		wantErr: []string{`spec.clusterIPs[1]: "10.0.0.11" has the same IP family as spec.clusterIPs[0]`},
	},
	{
		name: "mapped, zoned and bad external IPs",
		svc: service(func(s *corev1.Service) {
			s.Spec.ExternalIPs = []string{"::ffff:1.2.3.4", "fe80::1%eth0", "1.2.3"}
		}),
		wantErr: []string{
			`spec.externalIPs[0]: IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed`,
			`spec.externalIPs[1]: IP address "fe80::1%eth0" must not have a zone`,
			`spec.externalIPs[2]: invalid IP address "1.2.3"`,
		},
	},
	{
		name: "bad load balancer IP and source range",
		svc: service(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/33"}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}, {IP: "lb"}}
		}),
		wantErr: []string{
			`spec.loadBalancerSourceRanges[0]: invalid CIDR "10.0.0.0/33"`,
			`status.loadBalancer.ingress[1].ip: invalid IP address "lb"`,
		},
	},
	{
		name: "bad ports",
		svc: service(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "a", Port: 0, NodePort: 70000},
				{Name: "b", Port: 80, Protocol: "ICMP"},
				{Name: "c", Port: 65536},
			}
		}),
		wantErr: []string{
			`Service default/web: spec.ports[0].port: must be between 1 and 65535, got 0`,
			`spec.ports[0].nodePort: must be between 0 and 65535, got 70000`,
			`Service default/web: spec.ports[1].protocol: unsupported protocol "ICMP"`,
			`spec.ports[2].port: must be between 1 and 65535, got 65536`,
		},
	},
	{
		name: "duplicate ports",
		svc: service(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "a", Port: 80, NodePort: 30080},
				{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 30080},
			}
		}),
		wantErr: []string{
			`spec.ports[1].name: duplicate name "a" (also spec.ports[0])`,
			`spec.ports[1]: duplicate port 80/TCP (also spec.ports[0])`,
			`spec.ports[1].nodePort: duplicate node port 30080/TCP (also spec.ports[0])`,
		},
	},
	{
		name:    "two unnamed ports",
		svc:     service(func(s *corev1.Service) { s.Spec.Ports = []corev1.ServicePort{{Port: 80}, {Port: 81}} }),
		wantErr: []string{`spec.ports[1].name: must be set when a Service has several ports`},
	},
	{
		name: "bad policies and type",
		svc: service(func(s *corev1.Service) {
			s.Spec.Type = "Magic"
			s.Spec.ExternalTrafficPolicy = "Global"
			s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicy("Nearby"))
			s.Spec.SessionAffinity = "Cookie"
			s.Spec.HealthCheckNodePort = -1
		}),
		wantErr: []string{
			`spec.type: unsupported type "Magic"`,
			`spec.externalTrafficPolicy: unsupported policy "Global"`,
			`spec.internalTrafficPolicy: unsupported policy "Nearby"`,
			`spec.sessionAffinity: unsupported session affinity "Cookie"`,
			`spec.healthCheckNodePort: must be between 0 and 65535, got -1`,
		},
	},
	{
		name: "affinity timeout out of range",
		svc: service(func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr[int32](86401)},
			}
		}),
		wantErr: []string{`spec.sessionAffinityConfig.clientIP.timeoutSeconds: must be between 1 and 86400, got 86401`},
	},
	{
		name:    "no name",
		svc:     service(func(s *corev1.Service) { s.Name = "" }),
		wantErr: []string{`metadata.name: must not be empty`},
	},
}

func TestServiceSkipReason(t *testing.T) {
	for _, tc := range skippedServiceTests {
		if got := ServiceSkipReason(tc.svc); got == "" {
			t.Errorf("%s: ServiceSkipReason() = \"\", want a reason", tc.name)
		}
	}
	if got := ServiceSkipReason(service()); got != "" {
		t.Errorf("ServiceSkipReason(valid) = %q, want \"\"", got)
	}
}

func TestObjectErrorFields(t *testing.T) {
	_, err := ConvertService(service(func(s *corev1.Service) {
		s.Spec.Ports[0].Port = 0
		s.Spec.Ports[0].Protocol = "ICMP"
	}))
	var oe *ObjectError
	if !errors.As(err, &oe) {
		t.Fatalf("error %v is not an *ObjectError", err)
	}
	want := &ObjectError{Kind: "Service", Namespace: "default", Name: "web", Fields: []FieldError{
		{Path: "spec.ports[0].protocol", Detail: `unsupported protocol "ICMP"`},
		{Path: "spec.ports[0].port", Detail: "must be between 1 and 65535, got 0"},
	}}
	if diff := cmp.Diff(want, oe); diff != "" {
		t.Errorf("ObjectError (-want +got):\n%s", diff)
	}
}
