package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// slice returns a valid IPv4 EndpointSlice default/web-abc for Service web
// with one port and one endpoint, changed by each of edits.
func slice(edits ...func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default",
			Name:      "web-abc",
			Labels:    map[string]string{discoveryv1.LabelServiceName: "web"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr[int32](8080)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.5"}}},
	}
	for _, e := range edits {
		e(s)
	}
	return s
}

// modelSlice is the conversion of slice(), changed by each of edits.
func modelSlice(edits ...func(*model.EndpointSlice)) *model.EndpointSlice {
	s := &model.EndpointSlice{
		Namespace:   "default",
		Name:        "web-abc",
		Service:     "web",
		AddressType: model.IPv4,
		Ports:       []model.EndpointPort{{Name: "http", Protocol: model.TCP, Port: 8080}},
		Endpoints:   []model.Endpoint{{Addresses: addrs("10.1.0.5"), Ready: true, Serving: true}},
	}
	for _, e := range edits {
		e(s)
	}
	return s
}

func TestConvertSlice(t *testing.T) {
	tests := []struct {
		name    string
		slice   *discoveryv1.EndpointSlice
		want    *model.EndpointSlice
		wantErr []string
	}{
		{name: "defaults", slice: slice(), want: modelSlice()},
		{
			name: "conditions, topology and hints",
			slice: slice(func(s *discoveryv1.EndpointSlice) {
				s.Endpoints = []discoveryv1.Endpoint{
					{Addresses: []string{"10.1.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false)}},
					{
						Addresses:  []string{"10.1.0.6"},
						Conditions: discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)},
						NodeName:   ptr("node-a"),
						Zone:       ptr("zone-a"),
						Hints: &discoveryv1.EndpointHints{
							ForZones: []discoveryv1.ForZone{{Name: "zone-a"}},
							ForNodes: []discoveryv1.ForNode{{Name: "node-a"}},
						},
					},
				}
			}),
			want: modelSlice(func(s *model.EndpointSlice) {
				s.Endpoints = []model.Endpoint{
					{Addresses: addrs("10.1.0.5")},
					{
						Addresses: addrs("10.1.0.6"), Serving: true, Terminating: true,
						NodeName: "node-a", Zone: "zone-a",
						HintZones: []string{"zone-a"}, HintNodes: []string{"node-a"},
					},
				}
			}),
		},
		{
			name: "ports: nil name, nil port, protocol",
			slice: slice(func(s *discoveryv1.EndpointSlice) {
				s.Ports = []discoveryv1.EndpointPort{
					{Port: ptr[int32](53), Protocol: ptr(corev1.ProtocolUDP)},
					{Name: ptr("all")},
				}
			}),
			want: modelSlice(func(s *model.EndpointSlice) {
				s.Ports = []model.EndpointPort{{Protocol: model.UDP, Port: 53}}
			}),
		},
		{
			name: "IPv6",
			slice: slice(func(s *discoveryv1.EndpointSlice) {
				s.AddressType = discoveryv1.AddressTypeIPv6
				s.Endpoints[0].Addresses = []string{"fd00::5"}
			}),
			want: modelSlice(func(s *model.EndpointSlice) {
				s.AddressType = model.IPv6
				s.Endpoints[0].Addresses = addrs("fd00::5")
			}),
		},
		{name: "FQDN", slice: slice(func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"example.com"}
		})},
		{name: "no service label", slice: slice(func(s *discoveryv1.EndpointSlice) { s.Labels = nil })},
		{name: "other proxy", slice: slice(func(s *discoveryv1.EndpointSlice) {
			s.Labels[LabelServiceProxyName] = "other"
		})},
		{name: "headless", slice: slice(func(s *discoveryv1.EndpointSlice) {
			s.Labels[corev1.IsHeadlessService] = ""
		})},
		{
			name: "wrong family, bad address, no addresses",
			slice: slice(func(s *discoveryv1.EndpointSlice) {
				s.Endpoints = []discoveryv1.Endpoint{
					{Addresses: []string{"10.1.0.5"}},
					{Addresses: []string{"10.1.0.6", "10.1.0.300"}},
					{Addresses: []string{"fd00::1"}},
					{Addresses: []string{"::ffff:10.1.0.7"}},
					{},
				}
			}),
			wantErr: []string{
				`EndpointSlice default/web-abc: endpoints[1].addresses[1]: invalid IP address "10.1.0.300"`,
				`EndpointSlice default/web-abc: endpoints[2].addresses[0]: IPv6 address "fd00::1" in an IPv4 slice`,
				`endpoints[3].addresses[0]: IPv4-mapped IPv6 address "::ffff:10.1.0.7" is not allowed`,
				`endpoints[4].addresses: must not be empty`,
			},
		},
		{
			name: "IPv4 in an IPv6 slice",
			slice: slice(func(s *discoveryv1.EndpointSlice) {
				s.AddressType = discoveryv1.AddressTypeIPv6
			}),
			wantErr: []string{`endpoints[0].addresses[0]: IPv4 address "10.1.0.5" in an IPv6 slice`},
		},
		{
			name: "bad address type",
			slice: slice(func(s *discoveryv1.EndpointSlice) {
				s.AddressType = "IPv5"
				s.Endpoints[0].Addresses = []string{"10.1.0.5", "nope"}
			}),
			wantErr: []string{
				`addressType: unsupported address type "IPv5"`,
				`endpoints[0].addresses[1]: invalid IP address "nope"`,
			},
		},
		{
			name: "bad ports",
			slice: slice(func(s *discoveryv1.EndpointSlice) {
				s.Ports = []discoveryv1.EndpointPort{
					{Name: ptr("a"), Port: ptr[int32](0)},
					{Name: ptr("b"), Port: ptr[int32](80), Protocol: ptr(corev1.Protocol("ICMP"))},
					{Name: ptr("a"), Port: ptr[int32](81)},
				}
			}),
			wantErr: []string{
				`ports[0].port: must be between 1 and 65535, got 0`,
				`ports[1].protocol: unsupported protocol "ICMP"`,
				`ports[2].name: duplicate name "a" (also ports[0])`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConvertSlice(tc.slice)
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got, cmpAddrs); diff != "" {
				t.Errorf("ConvertSlice() (-want +got):\n%s", diff)
			}
			if reason := SliceSkipReason(tc.slice); (reason != "") != (got == nil && err == nil) {
				t.Errorf("SliceSkipReason() = %q, but ConvertSlice() = %v, %v", reason, got, err)
			}
		})
	}
}
