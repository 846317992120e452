package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion and Kind identify nftproxy's own configuration format.
const (
	APIVersion = "nftproxy.io/v1alpha1"
	Kind       = "ProxyConfiguration"
)

// LocalMode selects how nftproxy tells traffic from Pods on this node apart
// from other traffic (to decide what to masquerade and what counts as local
// for externalTrafficPolicy: Local).
type LocalMode string

const (
	// LocalModeClusterCIDR treats sources inside clusterCIDR as Pods.
	LocalModeClusterCIDR LocalMode = "ClusterCIDR"
	// LocalModeNodeCIDR treats sources inside the Node's spec.podCIDRs as Pods.
	LocalModeNodeCIDR LocalMode = "NodeCIDR"
)

// Keywords allowed in NodePortAddresses besides CIDRs, with kube-proxy's meaning.
const (
	// NodePortAddressesPrimary, as the only value, serves NodePorts on the
	// node's primary IPv4 and/or IPv6 address (from the Node object).
	NodePortAddressesPrimary = "primary"
	// NodePortAddressesAll serves NodePorts on every local address
	// (0.0.0.0/0 and ::/0).
	NodePortAddressesAll = "all"
)

// Configuration is nftproxy's configuration (kind ProxyConfiguration).
// docs/config.md describes every field; keep the two in step.
//
// Every field is exported and plain data so that cmd can overlay flags set
// explicitly after Load. Validate checks the result.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// MinSyncPeriod is the least time between two syncs: changes arriving
	// faster are batched into one transaction. 0 syncs on every change.
	MinSyncPeriod metav1.Duration `json:"minSyncPeriod"`
	// SyncPeriod is the longest time between two syncs: the periodic full
	// reconcile against the kernel, which also repairs rules changed by others.
	SyncPeriod metav1.Duration `json:"syncPeriod"`
	// MasqueradeBit is the bit of the packet mark that flags packets for SNAT.
	MasqueradeBit int32 `json:"masqueradeBit"`
	// MasqueradeAll masquerades all traffic to Service IPs, not only traffic
	// from outside the cluster.
	MasqueradeAll bool `json:"masqueradeAll"`
	// ClusterCIDR is kube-proxy's comma-separated list of Pod CIDRs, at most
	// one per IP family. Used by DetectLocalMode ClusterCIDR; empty turns
	// local-traffic detection off in that mode, as in kube-proxy.
	ClusterCIDR string `json:"clusterCIDR"`
	// DetectLocalMode is ClusterCIDR or NodeCIDR.
	DetectLocalMode LocalMode `json:"detectLocalMode"`
	// NodePortAddresses lists the CIDRs of the node addresses NodePorts are
	// served on. Empty, or the single value "primary", means the node's
	// primary IPs; "all" means every address.
	NodePortAddresses []string `json:"nodePortAddresses"`
	// DropNodePortsOnOtherAddresses drops new connections to a NodePort in
	// use that arrive on a node address NodePortAddresses leaves out
	// (loopback included), counted as reason nodeport-address; off, they
	// reach whatever listens on the host, as under kube-proxy.
	DropNodePortsOnOtherAddresses bool `json:"dropNodePortsOnOtherAddresses"`
	// HealthzBindAddress is IP:port of the health check server; empty disables it.
	HealthzBindAddress string `json:"healthzBindAddress"`
	// MetricsBindAddress is IP:port of the metrics server; empty disables it.
	MetricsBindAddress string `json:"metricsBindAddress"`
	// HostnameOverride, if set, is the name of this node's Node object
	// instead of the hostname.
	HostnameOverride string `json:"hostnameOverride"`
	// ClientConnection configures the connection to the API server.
	ClientConnection ClientConnection `json:"clientConnection"`
	// Conntrack configures conntrack clean-up and timeouts.
	Conntrack Conntrack `json:"conntrack"`
	// LoadBalancing chooses how Service ports pick an endpoint for a new
	// connection.
	LoadBalancing LoadBalancing `json:"loadBalancing"`
}

// Load-balancing algorithms, for LoadBalancing.Default and the
// nftproxy.io/load-balancing annotation of a Service.
const (
	LoadBalancingRandom = "random"
	LoadBalancingMaglev = "maglev"
)

// LoadBalancing configures how endpoints are picked.
type LoadBalancing struct {
	// Default applies to Services without the nftproxy.io/load-balancing
	// annotation: "random" (kube-proxy's behaviour) or "maglev".
	Default string `json:"default"`
	// Maglev shapes the lookup tables of Services that use Maglev. Every
	// node must have the same values, or nodes disagree on endpoints.
	Maglev Maglev `json:"maglev"`
}

// Maglev configures Maglev consistent hashing.
type Maglev struct {
	// TableSize is M, the slots of each Service port's lookup table: a prime
	// up to 65521. Each slot is one map element; removing one of n endpoints
	// moves close to 1/n of the connections when M > 100 n.
	TableSize uint32 `json:"tableSize"`
	// Seed seeds the hash of a connection; must not be 0.
	Seed uint32 `json:"seed"`
}

// ClientConnection configures the API server client; the fields mean what
// they mean in kube-proxy's clientConnection.
type ClientConnection struct {
	// Kubeconfig is the path of a kubeconfig file; empty uses the in-cluster
	// service account.
	Kubeconfig string `json:"kubeconfig"`
	// AcceptContentTypes is the Accept header sent to the API server; empty
	// uses client-go's default.
	AcceptContentTypes string `json:"acceptContentTypes"`
	// ContentType is the content type of requests sent to the API server.
	ContentType string `json:"contentType"`
	// QPS is the sustained request rate allowed to the API server.
	QPS float32 `json:"qps"`
	// Burst is how many requests may exceed QPS briefly.
	Burst int32 `json:"burst"`
}

// Conntrack configures how nftproxy treats the kernel's connection tracking.
type Conntrack struct {
	// UDPStaleEntryCleanup deletes conntrack entries of UDP flows whose
	// endpoint went away. Without it, a UDP client that keeps sending (DNS
	// is the usual victim) stays pinned to the dead endpoint until the entry
	// times out, because conntrack skips NAT rules for known flows.
	UDPStaleEntryCleanup bool `json:"udpStaleEntryCleanup"`
	// DropInvalid drops forwarded packets in conntrack state invalid,
	// counted as reason invalid-state, as kube-proxy's iptables mode does;
	// kube-proxy's nftables mode does not.
	DropInvalid bool `json:"dropInvalid"`
	// TCPEstablishedTimeout, if set, is written to
	// nf_conntrack_tcp_timeout_established; unset leaves the kernel's value.
	TCPEstablishedTimeout *metav1.Duration `json:"tcpEstablishedTimeout,omitempty"`
	// TCPCloseWaitTimeout, if set, is written to
	// nf_conntrack_tcp_timeout_close_wait; unset leaves the kernel's value.
	TCPCloseWaitTimeout *metav1.Duration `json:"tcpCloseWaitTimeout,omitempty"`
}

// Defaults, shared with the KubeProxyConfiguration mapping, which applies
// them where kube-proxy's own defaulting would.
const (
	defaultMinSyncPeriod = time.Second
	defaultSyncPeriod    = 30 * time.Second
	defaultMasqueradeBit = 14
	defaultHealthzPort   = "10256"
	defaultMetricsPort   = "10249"
	defaultContentType   = "application/vnd.kubernetes.protobuf"
	defaultQPS           = 5
	defaultBurst         = 10
	// DefaultMaglevTableSize keeps the share of connections moved when one
	// endpoint goes within about 1% of the ideal for Services of up to 10
	// endpoints, at 1,021 elements per Service port entry.
	DefaultMaglevTableSize = 1021
	DefaultMaglevSeed      = 0x6e667470
	// MaxMaglevTableSize is the largest prime below 2^16 (proxy/compile:
	// every slot is an element of every node's table).
	MaxMaglevTableSize = 65521
)

// Default returns a new configuration holding every default.
func Default() *Configuration {
	return &Configuration{
		TypeMeta:           metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		MinSyncPeriod:      metav1.Duration{Duration: defaultMinSyncPeriod},
		SyncPeriod:         metav1.Duration{Duration: defaultSyncPeriod},
		MasqueradeBit:      defaultMasqueradeBit,
		DetectLocalMode:    LocalModeClusterCIDR,
		NodePortAddresses:  []string{NodePortAddressesPrimary},
		HealthzBindAddress: "0.0.0.0:" + defaultHealthzPort,
		MetricsBindAddress: "127.0.0.1:" + defaultMetricsPort,
		ClientConnection: ClientConnection{
			ContentType: defaultContentType,
			QPS:         defaultQPS,
			Burst:       defaultBurst,
		},
		Conntrack: Conntrack{UDPStaleEntryCleanup: true},
		LoadBalancing: LoadBalancing{Default: LoadBalancingRandom,
			Maglev: Maglev{TableSize: DefaultMaglevTableSize, Seed: DefaultMaglevSeed}},
	}
}
