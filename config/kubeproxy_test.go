package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxy "k8s.io/kube-proxy/config/v1alpha1"
)

const kubeProxyHeader = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"

func TestLoadKubeProxy(t *testing.T) {
	for _, tc := range []struct {
		name         string
		file         string
		want         *Configuration
		wantWarnings []string
		wantErr      ErrorList
	}{{
		name: "kubeadm ConfigMap payload, mode nftables",
		file: "kube-proxy-kubeadm-nftables.yaml",
		want: withDefaults(func(c *Configuration) {
			c.ClusterCIDR = "10.244.0.0/16,fd00:10:244::/56"
			c.MetricsBindAddress = "0.0.0.0:10249"
			c.ClientConnection.Kubeconfig = "/var/lib/kube-proxy/kubeconfig.conf"
			// kube-proxy's defaults for unset timeouts.
			c.Conntrack.TCPEstablishedTimeout = durationPtr(24 * time.Hour)
			c.Conntrack.TCPCloseWaitTimeout = durationPtr(time.Hour)
		}),
		// Only the set fields of ignored sections, each once; the zero
		// values kubeadm writes everywhere else are not reported.
		wantWarnings: []string{
			"iptables.minSyncPeriod: ignored, nftproxy has no iptables mode",
			"ipvs.scheduler: ignored, nftproxy has no IPVS mode",
			"ipvs.strictARP: ignored, nftproxy has no IPVS mode",
		},
	}, {
		name:         "mode ipvs is an error naming mode",
		file:         "kube-proxy-ipvs.yaml",
		wantWarnings: []string{"ipvs.scheduler: ignored, nftproxy has no IPVS mode", "ipvs.strictARP: ignored, nftproxy has no IPVS mode"},
		wantErr:      ErrorList{{"mode", `unsupported value "ipvs": nftproxy implements only the nftables mode`}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := Load(filepath.Join("testdata", tc.file))
			checkErr(t, err, tc.wantErr, "")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if got != nil {
				if err := Validate(got); err != nil {
					t.Errorf("Validate: %v", err)
				}
			}
		})
	}
}

type parseKubeProxyCase struct {
	name         string
	body         string // after apiVersion and kind
	change       func(c *Configuration)
	wantWarnings []string
	wantErr      ErrorList
}

var parseKubeProxyCases = []parseKubeProxyCase{{
	name: "every mapped field",
	body: `nftables: {minSyncPeriod: 2s, syncPeriod: 1m, masqueradeBit: 0, masqueradeAll: true}
clusterCIDR: 10.0.0.0/8
detectLocalMode: NodeCIDR
nodePortAddresses: [10.1.0.0/16]
healthzBindAddress: 10.1.0.5
metricsBindAddress: "[::]:9999"
hostnameOverride: node-7
clientConnection: {kubeconfig: /k, acceptContentTypes: a, contentType: application/json, qps: 7, burst: 8}
conntrack: {tcpEstablishedTimeout: 2h, tcpCloseWaitTimeout: 0s}
`,
	change: func(c *Configuration) {
		c.MinSyncPeriod, c.SyncPeriod = duration(2*time.Second), duration(time.Minute)
		c.MasqueradeBit, c.MasqueradeAll = 0, true
		c.ClusterCIDR, c.DetectLocalMode = "10.0.0.0/8", LocalModeNodeCIDR
		c.NodePortAddresses = []string{"10.1.0.0/16"}
		c.HealthzBindAddress, c.MetricsBindAddress = "10.1.0.5:10256", "[::]:9999"
		c.HostnameOverride = "node-7"
		c.ClientConnection = ClientConnection{Kubeconfig: "/k", AcceptContentTypes: "a",
			ContentType: "application/json", QPS: 7, Burst: 8}
		c.Conntrack.TCPEstablishedTimeout = durationPtr(2 * time.Hour)
		c.Conntrack.TCPCloseWaitTimeout = nil // 0 means leave the kernel's value
	},
}, {
	name: "IPv6 bindAddress picks IPv6 server defaults",
	body: "bindAddress: '::'\n",
	change: func(c *Configuration) {
		c.HealthzBindAddress, c.MetricsBindAddress = "[::]:10256", "[::1]:10249"
		kubeProxyTimeouts(c)
	},
}, {
	name:         "a specific bindAddress is ignored with a warning",
	body:         "bindAddress: 192.168.1.10\n",
	change:       kubeProxyTimeouts,
	wantWarnings: []string{"bindAddress: ignored, nftproxy takes the node's primary IPs from the Node object"},
}, {
	name: "unknown and ignored fields are warnings, each once",
	body: `iptables: {masqueradeBit: 14, scheduler: rr}
featureGates: {SomeGate: true, OtherGate: false}
oomScoreAdj: -999
conntrack: {maxPerCore: 0, min: 131072}
logging: {format: json, options: {json: {infoBufferSize: "0"}}}
nftables: {colour: blue}
`,
	change: kubeProxyTimeouts,
	wantWarnings: []string{
		"conntrack.min: ignored, nftproxy does not resize the conntrack table",
		"featureGates.SomeGate: ignored, nftproxy has no kube-proxy feature gates",
		"iptables.masqueradeBit: ignored, nftproxy has no iptables mode",
		"iptables.scheduler: unknown field, ignored",
		"logging.format: ignored, use nftproxy's logging flags",
		"nftables.colour: unknown field, ignored",
		"oomScoreAdj: ignored, nftproxy does not change its OOM score",
	},
}, {
	name:    "mode iptables",
	body:    "mode: iptables\n",
	wantErr: ErrorList{{"mode", `unsupported value "iptables": nftproxy implements only the nftables mode`}},
}, {
	name:    "mode kernelspace",
	body:    "mode: kernelspace\n",
	wantErr: ErrorList{{"mode", `unsupported value "kernelspace": nftproxy implements only the nftables mode`}},
}}

func TestParseKubeProxy(t *testing.T) {
	for _, tc := range parseKubeProxyCases {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := Parse([]byte(kubeProxyHeader + tc.body))
			checkErr(t, err, tc.wantErr, "")
			var want *Configuration
			if tc.change != nil {
				want = withDefaults(tc.change)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// kubeProxyTimeouts sets the conntrack timeouts kube-proxy applies when its
// file leaves them unset.
func kubeProxyTimeouts(c *Configuration) {
	c.Conntrack.TCPEstablishedTimeout = durationPtr(24 * time.Hour)
	c.Conntrack.TCPCloseWaitTimeout = durationPtr(time.Hour)
}

// mappedKubeProxyFields are the KubeProxyConfiguration fields fromKubeProxy
// reads. A struct field covers its sub-fields.
var mappedKubeProxyFields = []string{
	"apiVersion", "kind", "mode", "clientConnection", "hostnameOverride",
	"bindAddress", "healthzBindAddress", "metricsBindAddress", "nftables",
	"detectLocalMode", "clusterCIDR", "nodePortAddresses",
	"conntrack.tcpEstablishedTimeout", "conntrack.tcpCloseWaitTimeout",
}

// TestKubeProxyFieldsCovered fails when k8s.io/kube-proxy gains a field that
// is neither mapped nor listed as ignored: decide which it is.
func TestKubeProxyFieldsCovered(t *testing.T) {
	covered := map[string]bool{}
	for _, p := range mappedKubeProxyFields {
		covered[p] = true
	}
	for _, f := range ignoredKubeProxyFields {
		covered[f.path] = true
	}
	var check func(prefix string, typ reflect.Type)
	check = func(prefix string, typ reflect.Type) {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				check(prefix, f.Type) // inlined, like TypeMeta
				continue
			}
			path := prefix + name
			switch {
			case covered[path]:
			case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[metav1.Duration]():
				check(path+".", f.Type)
			default:
				t.Errorf("KubeProxyConfiguration field %s is neither mapped nor ignored", path)
			}
		}
	}
	check("", reflect.TypeFor[kubeproxy.KubeProxyConfiguration]())
}
