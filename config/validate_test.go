package config

import (
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type validateCase struct {
	name   string
	change func(c *Configuration)
	want   ErrorList // nil: valid
}

var validateCases = []validateCase{{
	name:   "defaults",
	change: func(c *Configuration) {},
}, {
	name: "valid values at the limits",
	change: func(c *Configuration) {
		c.MinSyncPeriod = duration(0)
		c.SyncPeriod = duration(time.Nanosecond)
		c.MasqueradeBit = 31
		c.ClusterCIDR = "fd00::/48, 10.0.0.1/8" // spaces and host bits, as kube-proxy allows
		c.NodePortAddresses = []string{"all", "10.0.0.0/8"}
		c.HealthzBindAddress = ""
		c.MetricsBindAddress = "[fe80::1%eth0]:1"
		c.HostnameOverride = "Node-1.Example.com"
		c.Conntrack.TCPEstablishedTimeout = durationPtr(time.Second)
	},
}, {
	name:   "empty nodePortAddresses means primary",
	change: func(c *Configuration) { c.NodePortAddresses = nil },
}, {
	name: "every error at once, in field order",
	change: func(c *Configuration) {
		c.MinSyncPeriod = duration(time.Minute)
		c.SyncPeriod = duration(30 * time.Second)
		c.MasqueradeBit = 40
		c.ClusterCIDR = "10.0.0.0/33,10.0.0.0/8,10.1.0.0/16"
		c.DetectLocalMode = "Foo"
		c.NodePortAddresses = []string{"10.0.0.0/8", "x"}
		c.HealthzBindAddress = "0.0.0.0"
		c.MetricsBindAddress = "localhost:10249"
		c.HostnameOverride = "node_1"
		c.ClientConnection.QPS = 0
		c.ClientConnection.Burst = -1
		c.Conntrack.TCPCloseWaitTimeout = durationPtr(0)
	},
	want: ErrorList{
		{"syncPeriod", "must be >= minSyncPeriod (1m0s)"},
		{"masqueradeBit", "must be between 0 and 31, got 40"},
		{"clusterCIDR", `invalid CIDR "10.0.0.0/33"`},
		{"clusterCIDR", "more than one IPv4 CIDR"},
		{"detectLocalMode", `unsupported value "Foo" (supported: ClusterCIDR, NodeCIDR)`},
		{"nodePortAddresses[1]", `invalid CIDR "x"`},
		{"healthzBindAddress", `must be IP:port or empty, got "0.0.0.0"`},
		{"metricsBindAddress", `host must be an IP address, got "localhost:10249"`},
		{"hostnameOverride", `invalid node name "node_1": must be a DNS subdomain (RFC 1123)`},
		{"clientConnection.qps", "must be > 0, got 0"},
		{"clientConnection.burst", "must be > 0, got -1"},
		{"conntrack.tcpCloseWaitTimeout", "must be > 0 when set (leave it unset to keep the kernel's value), got 0s"},
	},
}, {
	name: "negative and zero periods",
	change: func(c *Configuration) {
		c.MinSyncPeriod = duration(-time.Second)
		c.SyncPeriod = duration(0)
		c.MasqueradeBit = -1
	},
	want: ErrorList{
		{"minSyncPeriod", "must be >= 0, got -1s"},
		{"syncPeriod", "must be > 0, got 0s"},
		{"masqueradeBit", "must be between 0 and 31, got -1"},
	},
}, {
	name: "address families and keywords",
	change: func(c *Configuration) {
		c.ClusterCIDR = "fd00::/48,fd01::/48,"
		c.NodePortAddresses = []string{"primary", "10.0.0.0/8", "localhost"}
		c.HealthzBindAddress = "127.0.0.1:0"
		c.ClientConnection.QPS = float32(math.NaN())
		c.ClientConnection.ContentType = ""
	},
	want: ErrorList{
		{"clusterCIDR", `invalid CIDR ""`},
		{"clusterCIDR", "more than one IPv6 CIDR"},
		{"nodePortAddresses[0]", `"primary" must be the only value`},
		{"nodePortAddresses[2]", `unsupported value "localhost": NodePorts on loopback addresses are not supported`},
		{"healthzBindAddress", `port must be between 1 and 65535, got "127.0.0.1:0"`},
		{"clientConnection.qps", "must be > 0, got NaN"},
		{"clientConnection.contentType", "must not be empty"},
	},
}, {
	name: "load balancing",
	change: func(c *Configuration) {
		c.LoadBalancing.Default = "Maglev"
		c.LoadBalancing.Maglev.TableSize = 1024
		c.LoadBalancing.Maglev.Seed = 0
	},
	want: ErrorList{
		{"loadBalancing.default", `unsupported value "Maglev" (supported: random, maglev)`},
		{"loadBalancing.maglev.tableSize", "must be a prime up to 65521, got 1024"},
		{"loadBalancing.maglev.seed", "must not be 0"},
	},
}, {
	name: "maglev table sizes at the limits",
	change: func(c *Configuration) {
		c.LoadBalancing.Default = "maglev"
		c.LoadBalancing.Maglev.TableSize = 65537 // a prime, but too large
	},
	want: ErrorList{{"loadBalancing.maglev.tableSize", "must be a prime up to 65521, got 65537"}},
}, {
	name:   "largest maglev table",
	change: func(c *Configuration) { c.LoadBalancing.Maglev.TableSize = 65521 },
}}

func TestValidate(t *testing.T) {
	for _, tc := range validateCases {
		t.Run(tc.name, func(t *testing.T) {
			c := withDefaults(tc.change)
			err := Validate(c)
			var got ErrorList
			if err != nil {
				got = err.(ErrorList)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorListMessage(t *testing.T) {
	err := Validate(withDefaults(func(c *Configuration) {
		c.MasqueradeBit = 40
		c.NodePortAddresses = []string{"10.0.0.0/8", "x"}
	}))
	want := `masqueradeBit: must be between 0 and 31, got 40; nodePortAddresses[1]: invalid CIDR "x"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestParsedHelpers(t *testing.T) {
	mustPrefixes := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		clusterCIDR   string
		nodePorts     []string
		wantCluster   []netip.Prefix
		wantNodePorts []netip.Prefix
	}{
		{"defaults", "", []string{"primary"}, nil, nil},
		{"empty nodePortAddresses", "", nil, nil, nil},
		{"dual-stack, masked", "10.244.1.0/16, fd00:10:244::1/56", []string{"192.168.1.7/24", "2001:db8::/64"},
			mustPrefixes("10.244.0.0/16", "fd00:10:244::/56"), mustPrefixes("192.168.1.0/24", "2001:db8::/64")},
		{"all", "fd00::/48", []string{"all"}, mustPrefixes("fd00::/48"), mustPrefixes("0.0.0.0/0", "::/0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := withDefaults(func(c *Configuration) {
				c.ClusterCIDR = tc.clusterCIDR
				c.NodePortAddresses = tc.nodePorts
			})
			if err := Validate(c); err != nil {
				t.Fatal(err)
			}
			cmpPrefix := cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })
			if diff := cmp.Diff(tc.wantCluster, c.ClusterCIDRs(), cmpPrefix); diff != "" {
				t.Errorf("ClusterCIDRs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNodePorts, c.NodePortCIDRs(), cmpPrefix); diff != "" {
				t.Errorf("NodePortCIDRs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeName(t *testing.T) {
	c := withDefaults(func(c *Configuration) { c.HostnameOverride = " Node-1 " })
	if got, err := c.NodeName(); err != nil || got != "node-1" {
		t.Errorf("NodeName() = %q, %v; want node-1", got, err)
	}
	c.HostnameOverride = ""
	if got, err := c.NodeName(); err != nil || got == "" {
		t.Errorf("NodeName() without override = %q, %v; want the hostname", got, err)
	}
}
