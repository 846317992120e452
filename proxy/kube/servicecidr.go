package kube

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// ConvertServiceCIDR validates a networking.k8s.io/v1 ServiceCIDR and
// converts it, returning an *ObjectError listing every problem when it is
// invalid. Its status (Ready, or being deleted) does not matter: its
// addresses are Service addresses for as long as the object exists, which
// is also when kube-proxy drops traffic to its unallocated ones.
func ConvertServiceCIDR(sc *networkingv1.ServiceCIDR) (*model.ServiceCIDR, error) {
	var errs fieldErrors
	if sc.Name == "" {
		errs.add("metadata.name", "must not be empty")
	}
	if len(sc.Spec.CIDRs) == 0 {
		errs.add("spec.cidrs", "must not be empty")
	}
	out := &model.ServiceCIDR{Name: sc.Name}
	for i, s := range sc.Spec.CIDRs {
		if p, ok := parsePrefix(s, index("spec.cidrs", i), false, &errs); ok {
			out.CIDRs = append(out.CIDRs, p)
		}
	}
	meta := sc.ObjectMeta
	meta.Namespace = "" // cluster-scoped
	if err := errs.err("ServiceCIDR", &meta); err != nil {
		return nil, err
	}
	return out, nil
}
