package kube

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

func TestConvertNode(t *testing.T) {
	tests := []struct {
		name    string
		node    *corev1.Node
		want    *model.Node
		wantErr []string
	}{
		{
			name: "addresses in order, deduplicated",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"zone": "a"}},
				Spec:       corev1.NodeSpec{PodCIDR: "10.244.1.0/24", PodCIDRs: []string{"10.244.1.0/24", "fd00:1::/64"}},
				Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
					{Type: corev1.NodeHostName, Address: "node-a"},
					{Type: corev1.NodeExternalIP, Address: "192.0.2.1"},
					{Type: corev1.NodeInternalIP, Address: "10.0.0.1"},
					{Type: corev1.NodeInternalIP, Address: "fd00::1"},
					{Type: corev1.NodeExternalIP, Address: "10.0.0.1"},
				}},
			},
			want: &model.Node{
				Name:     "node-a",
				IPs:      addrs("10.0.0.1", "fd00::1", "192.0.2.1"),
				PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24"), netip.MustParsePrefix("fd00:1::/64")},
				Labels:   map[string]string{"zone": "a"},
			},
		},
		{
			name: "podCIDR fallback, namespace ignored",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "node-a", Namespace: "default"},
				Spec:       corev1.NodeSpec{PodCIDR: "10.244.1.0/24"},
			},
			want: &model.Node{Name: "node-a", PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24")}},
		},
		{
			name: "invalid",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "node-a", Namespace: "default"},
				Spec:       corev1.NodeSpec{PodCIDRs: []string{"10.244.1.0/24", "10.244.1.0"}},
				Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
					{Type: corev1.NodeHostName, Address: "not an IP, ignored"},
					{Type: corev1.NodeExternalIP, Address: "192.0.2.300"},
				}},
			},
			wantErr: []string{
				`Node node-a: status.addresses[1].address: invalid IP address "192.0.2.300"`,
				`Node node-a: spec.podCIDRs[1]: invalid CIDR "10.244.1.0"`,
			},
		},
		{
			name:    "bad podCIDR",
			node:    &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Spec: corev1.NodeSpec{PodCIDR: "x/24"}},
			wantErr: []string{`spec.podCIDR: invalid CIDR "x/24"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConvertNode(tc.node)
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got, cmpAddrs); diff != "" {
				t.Errorf("ConvertNode() (-want +got):\n%s", diff)
			}
		})
	}
}
