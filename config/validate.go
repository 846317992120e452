package config

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks c and reports every problem at once, as an ErrorList in
// field order, or returns nil. It does not change c.
func Validate(c *Configuration) error {
	var errs ErrorList
	validateSync(&errs, c)
	validateClusterCIDR(&errs, c.ClusterCIDR)
	switch c.DetectLocalMode {
	case LocalModeClusterCIDR, LocalModeNodeCIDR:
	default:
		errs.add("detectLocalMode", "unsupported value %q (supported: %s, %s)",
			c.DetectLocalMode, LocalModeClusterCIDR, LocalModeNodeCIDR)
	}
	validateNodePortAddresses(&errs, c.NodePortAddresses)
	validateHostPort(&errs, "healthzBindAddress", c.HealthzBindAddress)
	validateHostPort(&errs, "metricsBindAddress", c.MetricsBindAddress)
	if c.HostnameOverride != "" {
		// Compared lowercased, as NodeName uses it.
		name := strings.ToLower(strings.TrimSpace(c.HostnameOverride))
		if len(validation.IsDNS1123Subdomain(name)) > 0 {
			errs.add("hostnameOverride", "invalid node name %q: must be a DNS subdomain (RFC 1123)", c.HostnameOverride)
		}
	}
	validateClientConnection(&errs, &c.ClientConnection)
	validateTimeout(&errs, "conntrack.tcpEstablishedTimeout", c.Conntrack.TCPEstablishedTimeout)
	validateTimeout(&errs, "conntrack.tcpCloseWaitTimeout", c.Conntrack.TCPCloseWaitTimeout)
	validateLoadBalancing(&errs, &c.LoadBalancing)
	return errs.orNil()
}

func validateLoadBalancing(errs *ErrorList, lb *LoadBalancing) {
	switch lb.Default {
	case LoadBalancingRandom, LoadBalancingMaglev:
	default:
		errs.add("loadBalancing.default", "unsupported value %q (supported: %s, %s)",
			lb.Default, LoadBalancingRandom, LoadBalancingMaglev)
	}
	if n := lb.Maglev.TableSize; !isPrime(n) || n > MaxMaglevTableSize {
		errs.add("loadBalancing.maglev.tableSize", "must be a prime up to %d, got %d", MaxMaglevTableSize, n)
	}
	if lb.Maglev.Seed == 0 {
		// The kernel draws a random seed for a hash given none, and
		// google/nftables sends none for 0: each node would hash differently.
		errs.add("loadBalancing.maglev.seed", "must not be 0")
	}
}

// isPrime reports whether n is a prime: a Maglev table needs a prime size
// so that every endpoint's permutation visits every slot.
func isPrime(n uint32) bool {
	if n < 2 {
		return false
	}
	for d := uint32(2); d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

func validateSync(errs *ErrorList, c *Configuration) {
	minSync, sync := c.MinSyncPeriod.Duration, c.SyncPeriod.Duration
	if minSync < 0 {
		errs.add("minSyncPeriod", "must be >= 0, got %s", minSync)
	}
	switch {
	case sync <= 0:
		errs.add("syncPeriod", "must be > 0, got %s", sync)
	case sync < minSync:
		errs.add("syncPeriod", "must be >= minSyncPeriod (%s)", minSync)
	}
	if c.MasqueradeBit < 0 || c.MasqueradeBit > 31 {
		errs.add("masqueradeBit", "must be between 0 and 31, got %d", c.MasqueradeBit)
	}
}

func validateClusterCIDR(errs *ErrorList, list string) {
	if list == "" {
		return
	}
	var v4, v6 int
	for _, s := range strings.Split(list, ",") {
		p, err := parseCIDR(s)
		if err != nil {
			errs.add("clusterCIDR", "invalid CIDR %q", strings.TrimSpace(s))
			continue
		}
		if p.Addr().Is4() {
			v4++
		} else {
			v6++
		}
	}
	// kube-proxy programs one local-traffic match per family.
	if v4 > 1 {
		errs.add("clusterCIDR", "more than one IPv4 CIDR")
	}
	if v6 > 1 {
		errs.add("clusterCIDR", "more than one IPv6 CIDR")
	}
}

func validateNodePortAddresses(errs *ErrorList, list []string) {
	for i, s := range list {
		path := "nodePortAddresses[" + strconv.Itoa(i) + "]"
		switch s {
		case NodePortAddressesPrimary:
			// NodePortCIDRs has no way to say "primary plus these CIDRs";
			// kube-proxy up to v1.36 rejects that mix too.
			if len(list) != 1 {
				errs.add(path, "%q must be the only value", s)
			}
		case NodePortAddressesAll:
		case "localhost":
			// kube-proxy's keyword for 127.0.0.0/8 and ::1/128; serving
			// NodePorts on loopback needs route_localnet and is not offered.
			errs.add(path, "unsupported value %q: NodePorts on loopback addresses are not supported", s)
		default:
			if _, err := parseCIDR(s); err != nil {
				errs.add(path, "invalid CIDR %q", s)
			}
		}
	}
}

// validateHostPort checks a server address: empty (disabled) or IP:port.
// A host name is refused, as kube-proxy does: which address it resolves to
// would depend on DNS at start-up.
func validateHostPort(errs *ErrorList, path, s string) {
	if s == "" {
		return
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		errs.add(path, "must be IP:port or empty, got %q", s)
		return
	}
	if _, err := netip.ParseAddr(host); err != nil {
		errs.add(path, "host must be an IP address, got %q", s)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		errs.add(path, "port must be between 1 and 65535, got %q", s)
	}
}

func validateClientConnection(errs *ErrorList, cc *ClientConnection) {
	if !(cc.QPS > 0) { // also catches NaN
		errs.add("clientConnection.qps", "must be > 0, got %v", cc.QPS)
	}
	if cc.Burst <= 0 {
		errs.add("clientConnection.burst", "must be > 0, got %d", cc.Burst)
	}
	if cc.ContentType == "" {
		errs.add("clientConnection.contentType", "must not be empty")
	}
}

func validateTimeout(errs *ErrorList, path string, d *metav1.Duration) {
	if d != nil && d.Duration <= 0 {
		errs.add(path, "must be > 0 when set (leave it unset to keep the kernel's value), got %s", d.Duration)
	}
}
