package compile

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// TestInputSame: an input is the same as itself, and differs from a copy
// in which any one field is changed, for every field of model.Service and
// model.EndpointSlice: a field added to either and not compared by
// sameService or sameSlice fails here, where it would otherwise make Stale
// keep a unit compiled from other values.
func TestInputSame(t *testing.T) {
	svc := model.Service{Namespace: "ns", Name: "web", Type: model.NodePort,
		ClusterIPs: []netip.Addr{netip.MustParseAddr("10.96.0.1")}, ExternalIPs: []netip.Addr{netip.MustParseAddr("192.0.2.1")},
		LoadBalancerIPs: []netip.Addr{netip.MustParseAddr("192.0.2.2")}, LoadBalancerSourceRanges: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Ports: []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: 80}}, AffinitySeconds: 10, HealthCheckNodePort: 30000,
		TrafficDistribution: "PreferClose"}
	sl := model.EndpointSlice{Namespace: "ns", Name: "web-1", Service: "web", AddressType: model.IPv4,
		Ports:     []model.EndpointPort{{Name: "http", Protocol: model.TCP, Port: 8080}},
		Endpoints: []model.Endpoint{{Addresses: []netip.Addr{netip.MustParseAddr("10.0.1.1")}, Ready: true}}}
	in := inputOf(&svc, []*model.EndpointSlice{&sl})
	if !in.same(&svc, []*model.EndpointSlice{&sl}) {
		t.Fatal("an input differs from the values it was made from")
	}
	for _, m := range mutations(reflect.ValueOf(svc)) {
		changed := m.value.Interface().(model.Service)
		if in.same(&changed, []*model.EndpointSlice{&sl}) {
			t.Errorf("model.Service.%s changed, input still the same", m.field)
		}
	}
	for _, m := range mutations(reflect.ValueOf(sl)) {
		changed := m.value.Interface().(model.EndpointSlice)
		if in.same(&svc, []*model.EndpointSlice{&changed}) {
			t.Errorf("model.EndpointSlice.%s changed, input still the same", m.field)
		}
	}
	if in.same(&svc, nil) {
		t.Error("an input without its slice is still the same")
	}
}

type mutation struct {
	field string
	value reflect.Value
}

// mutations returns copies of the struct v, each with one field changed:
// a string extended, a number incremented, a bool flipped, a slice
// replaced by a copy in a new array.
func mutations(v reflect.Value) []mutation {
	var out []mutation
	for i := range v.NumField() {
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		f := c.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(f.Uint() + 1)
		case reflect.Slice:
			n := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
			reflect.Copy(n, f)
			f.Set(n)
		default:
			panic("mutations: field " + v.Type().Field(i).Name + " of kind " + f.Kind().String())
		}
		out = append(out, mutation{v.Type().Field(i).Name, c})
	}
	return out
}
