package compile

import "github.com/nftproxy/nftproxy/proxy/model"

// input is what a unit was compiled from: its Service and the Service's
// EndpointSlices, copied shallowly (their slices' arrays are shared, not
// copied). Model values are never modified in place: a changed Service or
// EndpointSlice is a new value, with new arrays for what changed. So when a
// snapshot holds values that are field for field the same, with the same
// arrays, as a unit's input, it holds the very input the unit was compiled
// from, and Stale need not compile it again.
type input struct {
	svc    model.Service
	slices []model.EndpointSlice
}

func inputOf(svc *model.Service, slices []*model.EndpointSlice) input {
	in := input{svc: *svc, slices: make([]model.EndpointSlice, len(slices))}
	for i, s := range slices {
		in.slices[i] = *s
	}
	return in
}

// same reports whether svc and slices are the unit's input: the same
// values, compared field by field, slices by their arrays. It may report
// false for equal contents in other arrays; Stale then compiles and
// compares the units.
func (in *input) same(svc *model.Service, slices []*model.EndpointSlice) bool {
	if !sameService(&in.svc, svc) || len(in.slices) != len(slices) {
		return false
	}
	for i, s := range slices {
		if !sameSlice(&in.slices[i], s) {
			return false
		}
	}
	return true
}

// sameService compares every field of model.Service; TestInputSame fails
// when a field is added and not compared here.
func sameService(a, b *model.Service) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name && a.Type == b.Type &&
		sameArray(a.ClusterIPs, b.ClusterIPs) && sameArray(a.ExternalIPs, b.ExternalIPs) &&
		sameArray(a.LoadBalancerIPs, b.LoadBalancerIPs) && sameArray(a.LoadBalancerSourceRanges, b.LoadBalancerSourceRanges) &&
		sameArray(a.Ports, b.Ports) && a.ExternalLocal == b.ExternalLocal && a.InternalLocal == b.InternalLocal &&
		a.AffinitySeconds == b.AffinitySeconds && a.HealthCheckNodePort == b.HealthCheckNodePort &&
		a.TrafficDistribution == b.TrafficDistribution && a.LoadBalancing == b.LoadBalancing
}

// sameSlice compares every field of model.EndpointSlice; TestInputSame
// fails when a field is added and not compared here.
func sameSlice(a, b *model.EndpointSlice) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name && a.Service == b.Service &&
		a.AddressType == b.AddressType && sameArray(a.Ports, b.Ports) && sameArray(a.Endpoints, b.Endpoints)
}

// sameArray reports whether a and b are the same elements of the same
// array (both empty counts as the same).
func sameArray[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
