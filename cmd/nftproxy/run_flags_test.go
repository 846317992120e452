package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/config"
)

const ownFile = `apiVersion: nftproxy.io/v1alpha1
kind: ProxyConfiguration
clusterCIDR: 10.244.0.0/16
syncPeriod: 1m
masqueradeAll: true
metricsBindAddress: 0.0.0.0:10249
`

const kubeProxyFile = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clusterCIDR: 10.244.0.0/16
nftables:
  syncPeriod: 45s
`

// TestPrecedence: defaults < file < flags set explicitly. A flag left at
// its default does not override the file.
func TestPrecedence(t *testing.T) {
	tests := []struct {
		name string
		file string
		args []string
		edit func(c *config.Configuration)
	}{
		{name: "defaults", edit: func(*config.Configuration) {}},
		{name: "flags over defaults", args: []string{"--cluster-cidr=10.0.0.0/8", "--masquerade-all", "--nodeport-addresses=all", "--sync-period=10s"},
			edit: func(c *config.Configuration) {
				c.ClusterCIDR, c.MasqueradeAll, c.NodePortAddresses = "10.0.0.0/8", true, []string{"all"}
				c.SyncPeriod.Duration = 10 * time.Second
			}},
		{name: "file over defaults", file: ownFile, edit: func(c *config.Configuration) {
			c.ClusterCIDR, c.MasqueradeAll, c.MetricsBindAddress = "10.244.0.0/16", true, "0.0.0.0:10249"
			c.SyncPeriod.Duration = time.Minute
		}},
		{name: "flags set explicitly over file", file: ownFile,
			args: []string{"--cluster-cidr=10.1.0.0/16", "--masquerade-all=false", "--metrics-bind-address=", "--kubeconfig=/k", "--hostname-override=n1", "--healthz-bind-address=127.0.0.1:1"},
			edit: func(c *config.Configuration) {
				c.ClusterCIDR, c.MasqueradeAll, c.MetricsBindAddress = "10.1.0.0/16", false, ""
				c.SyncPeriod.Duration = time.Minute
				c.ClientConnection.Kubeconfig, c.HostnameOverride, c.HealthzBindAddress = "/k", "n1", "127.0.0.1:1"
			}},
		{name: "kube-proxy's file, flag over it", file: kubeProxyFile, args: []string{"--min-sync-period=2s"},
			edit: func(c *config.Configuration) {
				kubeProxyDefaults(c)
				c.MinSyncPeriod.Duration = 2 * time.Second
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", writeFile(t, tc.file)}, args...)
			}
			got, err := newRunFlags(io.Discard).parse(args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			want := config.Default()
			tc.edit(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("configuration (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	_, err := newRunFlags(io.Discard).parse([]string{"--sync-period=10ms", "--cluster-cidr=x", "--nodeport-addresses=primary,10.0.0.0/8"}, io.Discard)
	want := `syncPeriod: must be >= minSyncPeriod (1s); clusterCIDR: invalid CIDR "x"; nodePortAddresses[0]: "primary" must be the only value`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

// kubeProxyDefaults sets what kubeProxyFile maps to: its fields, and the
// conntrack timeouts kube-proxy writes when they are null.
func kubeProxyDefaults(c *config.Configuration) {
	c.ClusterCIDR = "10.244.0.0/16"
	c.SyncPeriod.Duration = 45 * time.Second
	c.Conntrack.TCPEstablishedTimeout = &metav1.Duration{Duration: 24 * time.Hour}
	c.Conntrack.TCPCloseWaitTimeout = &metav1.Duration{Duration: time.Hour}
}

// TestWriteConfigTo: the file written loads back as the same configuration.
func TestWriteConfigTo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.yaml")
	var stderr bytes.Buffer
	err := dispatch([]string{"--config", writeFile(t, kubeProxyFile), "--masquerade-all", "--write-config-to", out}, io.Discard, &stderr)
	if err != nil {
		t.Fatalf("%v (stderr %s)", err, stderr.String())
	}
	got, _, err := config.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	kubeProxyDefaults(want)
	want.MasqueradeAll = true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("written configuration (-want +got):\n%s", diff)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
