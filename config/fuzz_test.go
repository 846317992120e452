package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// The configuration file is outside input: an operator's, or kubeadm's
// ConfigMap. Whatever it holds, each decoder returns a configuration or an
// error, and a configuration it returns is one Write writes and Load reads
// back unchanged (--write-config-to depends on it). Seeds: testdata/*.yaml
// and testdata/fuzz/FuzzX/.

// FuzzDecodeOwn fuzzes the decoder of nftproxy's own ProxyConfiguration.
func FuzzDecodeOwn(f *testing.F) {
	addSeeds(f, "proxy-configuration.yaml", "unknown-field.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeOwn(data)
		if err != nil {
			return
		}
		checkRoundTrip(t, c)
	})
}

// FuzzDecodeKubeProxy fuzzes the decoder of kube-proxy's
// KubeProxyConfiguration, from the JSON that Parse hands it.
func FuzzDecodeKubeProxy(f *testing.F) {
	addSeeds(f, "kube-proxy-kubeadm-nftables.yaml", "kube-proxy-ipvs.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return
		}
		c, _, err := decodeKubeProxy(js)
		if err != nil {
			return
		}
		checkRoundTrip(t, c)
	})
}

func addSeeds(f *testing.F, names ...string) {
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// checkRoundTrip checks that c, written as our own kind, parses back to c.
func checkRoundTrip(t *testing.T, c *Configuration) {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, c); err != nil {
		t.Fatalf("write: %v", err)
	}
	back, warnings, err := Parse(b.Bytes())
	if err != nil || len(warnings) > 0 {
		t.Fatalf("parse what Write wrote: %v %v\n%s", err, warnings, b.String())
	}
	c.TypeMeta = back.TypeMeta // the kube-proxy kind becomes ours
	if !reflect.DeepEqual(c, back) {
		t.Fatalf("read back differs:\nwrote %#v\nread  %#v", c, back)
	}
}
