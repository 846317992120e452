package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConvertServiceCIDR(t *testing.T) {
	tests := []struct {
		name    string
		cidrs   []string
		want    []string // nil: an error
		wantErr string
	}{
		{name: "dual-stack", cidrs: []string{"10.96.0.0/16", "fd00:96::/108"}, want: []string{"10.96.0.0/16", "fd00:96::/108"}},
		{name: "host bits cleared", cidrs: []string{"10.96.1.1/16"}, want: []string{"10.96.0.0/16"}},
		{name: "empty", wantErr: "ServiceCIDR extra: spec.cidrs: must not be empty"},
		{name: "invalid", cidrs: []string{"10.96.0.0/16", "10.300.0.0/16"},
			wantErr: `ServiceCIDR extra: spec.cidrs[1]: invalid CIDR "10.300.0.0/16"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"},
				Spec: networkingv1.ServiceCIDRSpec{CIDRs: tc.cidrs}}
			got, err := ConvertServiceCIDR(sc)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, p := range got.CIDRs {
				texts = append(texts, p.String())
			}
			if diff := cmp.Diff(tc.want, texts); diff != "" || got.Name != "extra" {
				t.Errorf("%s: (-want +got):\n%s", got.Name, diff)
			}
		})
	}
}
