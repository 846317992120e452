package config

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func duration(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

func durationPtr(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// withDefaults returns Default() changed by f.
func withDefaults(f func(c *Configuration)) *Configuration {
	c := Default()
	f(c)
	return c
}

func TestDefault(t *testing.T) {
	want := &Configuration{
		TypeMeta:           metav1.TypeMeta{APIVersion: "nftproxy.io/v1alpha1", Kind: "ProxyConfiguration"},
		MinSyncPeriod:      duration(time.Second),
		SyncPeriod:         duration(30 * time.Second),
		MasqueradeBit:      14,
		DetectLocalMode:    LocalModeClusterCIDR,
		NodePortAddresses:  []string{"primary"},
		HealthzBindAddress: "0.0.0.0:10256",
		MetricsBindAddress: "127.0.0.1:10249",
		ClientConnection: ClientConnection{
			ContentType: "application/vnd.kubernetes.protobuf",
			QPS:         5,
			Burst:       10,
		},
		Conntrack:     Conntrack{UDPStaleEntryCleanup: true},
		LoadBalancing: LoadBalancing{Default: "random", Maglev: Maglev{TableSize: 1021, Seed: 0x6e667470}},
	}
	got := Default()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default() (-want +got):\n%s", diff)
	}
	if err := Validate(got); err != nil {
		t.Errorf("Validate(Default()) = %v, want nil", err)
	}
	if Default() == got || &Default().NodePortAddresses[0] == &got.NodePortAddresses[0] {
		t.Error("Default() shares memory between calls")
	}
}

type loadCase struct {
	name    string
	file    string
	want    *Configuration
	wantErr ErrorList // compared when the error is an ErrorList
	errText string    // substring of any other error
}

var loadCases = []loadCase{{
	name: "own kind, every field",
	file: "proxy-configuration.yaml",
	want: &Configuration{
		TypeMeta:           metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		MinSyncPeriod:      duration(2 * time.Second),
		SyncPeriod:         duration(time.Minute),
		MasqueradeBit:      15,
		MasqueradeAll:      true,
		ClusterCIDR:        "10.244.0.0/16,fd00:10:244::/56",
		DetectLocalMode:    LocalModeNodeCIDR,
		NodePortAddresses:  []string{"192.168.10.0/24", "2001:db8:10::/64"},
		HealthzBindAddress: "[::]:10256",
		MetricsBindAddress: "",
		HostnameOverride:   "node-1",
		ClientConnection: ClientConnection{
			Kubeconfig:         "/var/lib/nftproxy/kubeconfig.conf",
			AcceptContentTypes: "application/json",
			ContentType:        "application/json",
			QPS:                50,
			Burst:              100,
		},
		Conntrack: Conntrack{
			TCPEstablishedTimeout: durationPtr(24 * time.Hour),
			TCPCloseWaitTimeout:   durationPtr(time.Hour),
		},
		LoadBalancing: LoadBalancing{Default: "maglev", Maglev: Maglev{TableSize: 16381, Seed: 7}},
	},
}, {
	name: "own kind, unknown fields are errors",
	file: "unknown-field.yaml",
	wantErr: ErrorList{
		{Path: "conntrack.maxPerCore", Detail: "unknown field"},
		{Path: "syncperiod", Detail: "unknown field"},
	},
}, {
	name:    "missing file",
	file:    "does-not-exist.yaml",
	errText: "read config",
}}

func TestLoad(t *testing.T) {
	for _, tc := range loadCases {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := Load(filepath.Join("testdata", tc.file))
			checkErr(t, err, tc.wantErr, tc.errText)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    string
		want    *Configuration
		wantErr ErrorList
		errText string
	}{{
		name: "fields not in the file keep their defaults",
		data: "apiVersion: nftproxy.io/v1alpha1\nkind: ProxyConfiguration\nsyncPeriod: 1h\nclientConnection: {qps: 20}\n",
		want: withDefaults(func(c *Configuration) {
			c.SyncPeriod = duration(time.Hour)
			c.ClientConnection.QPS = 20
		}),
	}, {
		name: "JSON is accepted",
		data: `{"apiVersion": "nftproxy.io/v1alpha1", "kind": "ProxyConfiguration", "masqueradeAll": true}`,
		want: withDefaults(func(c *Configuration) { c.MasqueradeAll = true }),
	}, {
		name:    "field names are case-sensitive",
		data:    "apiVersion: nftproxy.io/v1alpha1\nkind: ProxyConfiguration\nSyncPeriod: 1h\n",
		wantErr: ErrorList{{Path: "SyncPeriod", Detail: "unknown field"}},
	}, {
		name:    "duplicate keys",
		data:    "apiVersion: nftproxy.io/v1alpha1\nkind: ProxyConfiguration\nsyncPeriod: 1h\nsyncPeriod: 2h\n",
		errText: "already set in map",
	}, {
		name:    "wrong type",
		data:    "apiVersion: nftproxy.io/v1alpha1\nkind: ProxyConfiguration\nmasqueradeBit: fourteen\n",
		errText: "masqueradeBit",
	}, {
		name:    "unsupported kind",
		data:    "apiVersion: v1\nkind: ConfigMap\n",
		errText: `unsupported apiVersion "v1" kind "ConfigMap"`,
	}, {
		name:    "empty file",
		data:    "",
		errText: `unsupported apiVersion "" kind ""`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Parse([]byte(tc.data))
			checkErr(t, err, tc.wantErr, tc.errText)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteRoundTrip(t *testing.T) {
	full, _, err := Load("testdata/proxy-configuration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fromKubeProxy, _, err := Load("testdata/kube-proxy-kubeadm-nftables.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   *Configuration
	}{
		{"defaults", Default()},
		{"every field set", full},
		{"mapped from KubeProxyConfiguration", fromKubeProxy},
		{"zero values, which differ from the defaults", &Configuration{NodePortAddresses: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tc.in); err != nil {
				t.Fatal(err)
			}
			got, warnings, err := Parse(buf.Bytes())
			if err != nil || len(warnings) != 0 {
				t.Fatalf("Parse(Write(x)): warnings %q, error %v\n%s", warnings, err, buf.String())
			}
			want := *tc.in
			want.TypeMeta = metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("Parse(Write(x)) (-want +got):\n%s\n%s", diff, buf.String())
			}
		})
	}
}

// checkErr checks err against an expected ErrorList or, failing that, a
// substring of its message; with neither, err must be nil.
func checkErr(t *testing.T, err error, wantList ErrorList, wantText string) {
	t.Helper()
	switch {
	case wantList != nil:
		var got ErrorList
		if !errors.As(err, &got) {
			t.Fatalf("error = %v, want an ErrorList", err)
		}
		if diff := cmp.Diff(wantList, got); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
	case wantText != "":
		if err == nil || !strings.Contains(err.Error(), wantText) {
			t.Errorf("error = %v, want it to contain %q", err, wantText)
		}
	case err != nil:
		t.Errorf("unexpected error: %v", err)
	}
}
