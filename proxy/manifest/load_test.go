package manifest

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nftproxy/nftproxy/proxy/model"
)

var cmpNetip = cmp.Options{
	cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
	cmpopts.EquateEmpty(),
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// TestLoadTestdata reads every kind of input at once: multi-document YAML,
// a JSON object, a JSON stream, a List and a typed List.
func TestLoadTestdata(t *testing.T) {
	got, err := Load([]string{"testdata"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{
		Snapshot: model.Snapshot{
			Services: []model.Service{
				{
					Namespace: "b", Name: "api", Type: model.ClusterIP, ClusterIPs: addrs("10.96.0.1"),
					Ports: []model.ServicePort{{Protocol: model.TCP, Port: 443}},
				},
				{
					Namespace: "default", Name: "web", Type: model.NodePort, ClusterIPs: addrs("10.96.0.10"),
					Ports: []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: 80, NodePort: 30080}},
				},
				{
					Namespace: "kube-system", Name: "dns", Type: model.ClusterIP,
					ClusterIPs: addrs("10.96.0.53", "fd00::53"),
					Ports: []model.ServicePort{
						{Name: "dns", Protocol: model.UDP, Port: 53},
						{Name: "dns-tcp", Protocol: model.TCP, Port: 53},
					},
				},
			},
			Slices: []model.EndpointSlice{{
				Namespace: "default", Name: "web-abc", Service: "web", AddressType: model.IPv4,
				Ports: []model.EndpointPort{{Name: "http", Protocol: model.TCP, Port: 8080}},
				Endpoints: []model.Endpoint{{
					Addresses: addrs("10.244.1.5"), Ready: true, Serving: true, NodeName: "node-a",
				}},
			}},
			ServiceCIDRs: []model.ServiceCIDR{{Name: "kubernetes",
				CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00::/108")}}},
		},
		Nodes: []model.Node{
			{
				Name: "node-a", IPs: addrs("10.0.0.1"),
				PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24")},
				Labels:   map[string]string{"topology.kubernetes.io/zone": "z1"},
			},
			{Name: "node-b"},
		},
		Skipped: []string{
			"testdata/list.yaml: items[1]: v1 ConfigMap kube-system/cfg",
			"testdata/list.yaml: items[3]: networking.k8s.io/v1beta1 ServiceCIDR old: unsupported apiVersion, want networking.k8s.io/v1",
			"testdata/web.yaml (document 3): apps/v1 Deployment default/web",
			"testdata/web.yaml (document 4): v1 Service data/db: headless (clusterIP None)",
		},
	}
	if diff := cmp.Diff(want, got, cmpNetip); diff != "" {
		t.Errorf("Load() (-want +got):\n%s", diff)
	}
}

// writeFiles creates files (name to content) in a new directory, which it
// returns.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadWalk(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.yml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
		"a/z.json":       `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "az"}}`,
		"a/deep/y.YAML":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ay}\n",
		"a.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"a/skip.txt":     "not: read",
		"c/ignored.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	})
	got, err := Load([]string{dir + "/a.yaml", dir + "/a", dir + "/b.yml", dir + "/./a.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		dir + "/a.yaml: v1 ConfigMap a",
		dir + "/a/deep/y.YAML: v1 ConfigMap ay",
		dir + "/a/z.json: v1 ConfigMap az",
		dir + "/b.yml: v1 ConfigMap b",
	}
	if diff := cmp.Diff(want, got.Skipped); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
}

func TestLoadEmpty(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"empty.yaml":    "",
		"comments.yaml": "# nothing\n---\n# still nothing\n---\n",
		"null.yaml":     "---\n~\n---\nnull\n",
		"empty.json":    " \n",
	})
	got, err := Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Result{}, got, cmpNetip); diff != "" {
		t.Errorf("Load() (-want +got):\n%s", diff)
	}
}
