// Package model holds the pure value types the rule compiler reads: Services,
// EndpointSlices and the Node, already validated and converted from the
// Kubernetes API types. It imports nothing from client-go so that the compiler
// and its tests stay free of API machinery.
package model

import (
	"net/netip"
	"strconv"
)

// Protocol is a Service port protocol, spelled as in the Kubernetes API.
type Protocol string

// The protocols a Service port may use.
const (
	TCP  Protocol = "TCP"
	UDP  Protocol = "UDP"
	SCTP Protocol = "SCTP"
)

// ServiceType is the Kubernetes Service type.
type ServiceType string

// The Service types nftproxy programs. ExternalName Services and headless
// Services are never converted into the model.
const (
	ClusterIP    ServiceType = "ClusterIP"
	NodePort     ServiceType = "NodePort"
	LoadBalancer ServiceType = "LoadBalancer"
)

// Service is one Kubernetes Service, reduced to what the data plane needs.
type Service struct {
	Namespace string
	Name      string
	Type      ServiceType
	// ClusterIPs holds one address per IP family, primary family first.
	ClusterIPs []netip.Addr
	// ExternalIPs are spec.externalIPs.
	ExternalIPs []netip.Addr
	// LoadBalancerIPs are status.loadBalancer.ingress IPs whose ipMode is
	// not Proxy.
	LoadBalancerIPs []netip.Addr
	// LoadBalancerSourceRanges restricts who may reach LoadBalancerIPs.
	LoadBalancerSourceRanges []netip.Prefix
	Ports                    []ServicePort
	// ExternalLocal is externalTrafficPolicy: Local.
	ExternalLocal bool
	// InternalLocal is internalTrafficPolicy: Local.
	InternalLocal bool
	// AffinitySeconds is the ClientIP session affinity timeout; 0 means none.
	AffinitySeconds int32
	// HealthCheckNodePort is spec.healthCheckNodePort, 0 when unset.
	HealthCheckNodePort uint16
	// TrafficDistribution is spec.trafficDistribution, "" when unset.
	TrafficDistribution string
	// LoadBalancing is the value of the AnnotationLoadBalancing annotation,
	// "" without one: how the Service's ports pick an endpoint.
	LoadBalancing string
}

// AnnotationLoadBalancing chooses a Service's load balancing: "random" or
// "maglev" (consistent hashing); without it, the configured default.
const AnnotationLoadBalancing = "nftproxy.io/load-balancing"

// Key returns "namespace/name".
func (s *Service) Key() string { return s.Namespace + "/" + s.Name }

// ServicePort is one entry of spec.ports.
type ServicePort struct {
	// Name is the port name; it matches EndpointSlice port names.
	Name     string
	Protocol Protocol
	Port     uint16
	// NodePort is 0 unless the Service type allocates node ports.
	NodePort uint16
}

// Label returns the port name, or the port number for an unnamed port, for
// use in chain names and messages.
func (p ServicePort) Label() string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Port))
}

// AddressType is the address family of an EndpointSlice.
type AddressType string

// The address types nftproxy programs; FQDN slices are ignored at conversion.
const (
	IPv4 AddressType = "IPv4"
	IPv6 AddressType = "IPv6"
)

// EndpointSlice is one discovery.k8s.io/v1 EndpointSlice.
type EndpointSlice struct {
	Namespace string
	Name      string
	// Service is the value of the kubernetes.io/service-name label.
	Service     string
	AddressType AddressType
	Ports       []EndpointPort
	Endpoints   []Endpoint
}

// EndpointPort is one entry of an EndpointSlice's ports.
type EndpointPort struct {
	Name     string
	Protocol Protocol
	Port     uint16
}

// Endpoint is one entry of an EndpointSlice's endpoints.
type Endpoint struct {
	// Addresses holds the endpoint's addresses; the data plane uses only the
	// first, as kube-proxy does.
	Addresses   []netip.Addr
	Ready       bool
	Serving     bool
	Terminating bool
	NodeName    string
	Zone        string
	// HintZones and HintNodes are the topology hints, nil when absent.
	HintZones []string
	HintNodes []string
}

// Node is the node nftproxy runs on.
type Node struct {
	Name     string
	IPs      []netip.Addr
	PodCIDRs []netip.Prefix
	Labels   map[string]string
}

// ServiceCIDR is one networking.k8s.io/v1 ServiceCIDR: ranges the API
// server allocates ClusterIPs from. An address inside one that no Service
// holds is dropped rather than routed on.
type ServiceCIDR struct {
	Name string
	// CIDRs are spec.cidrs: one or two prefixes, at most one per family.
	CIDRs []netip.Prefix
}

// Snapshot is everything the compiler reads about the cluster.
type Snapshot struct {
	Services []Service
	Slices   []EndpointSlice
	// ServiceCIDRs are sorted by name.
	ServiceCIDRs []ServiceCIDR
}
