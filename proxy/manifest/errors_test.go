package manifest

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nftproxy/nftproxy/proxy/kube"
)

const goodService = `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: 10.96.0.10
  ports: [{port: 80}]
`

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		// want holds one substring per expected error line, in order;
		// "DIR" stands for the directory holding the files.
		want []string
	}{
		{
			name:  "unparseable YAML, line counted in the file",
			files: map[string]string{"bad.yaml": goodService + "---\nkind: Service\nmetadata:\n  name: [\n"},
			want:  []string{"DIR/bad.yaml (document 2): yaml: line 10: "},
		},
		{
			name:  "unparseable YAML, single document",
			files: map[string]string{"bad.yaml": "a: 1\nb: : 2\n"},
			want:  []string{"DIR/bad.yaml: yaml: line 2: "},
		},
		{
			name:  "duplicate YAML key",
			files: map[string]string{"dup.yaml": "apiVersion: v1\nkind: Service\nkind: Node\n"},
			want:  []string{`DIR/dup.yaml: yaml: unmarshal errors:`},
		},
		{
			name:  "JSON syntax error",
			files: map[string]string{"bad.json": "{\n\"kind\": \"Service\",\n}\n"},
			want:  []string{"DIR/bad.json: line 3: invalid character '}'"},
		},
		{
			name: "unknown and miscased fields",
			files: map[string]string{"web.yaml": strings.Replace(goodService, "ports: [{port: 80}]",
				"Ports: [{port: 80}]\n  ports: [{port: 80, nodeport: 1}]", 1)},
			want: []string{
				`DIR/web.yaml: Service default/web: spec.Ports: unknown field`,
				`DIR/web.yaml: Service default/web: spec.ports[0].nodeport: unknown field`,
			},
		},
		{
			name:  "duplicate JSON field",
			files: map[string]string{"web.json": `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "name": "b"}}`},
			want:  []string{`DIR/web.json: Node b: metadata.name: duplicate field`},
		},
		{
			name:  "wrong type",
			files: map[string]string{"web.yaml": strings.Replace(goodService, "port: 80", "port: eighty", 1)},
			want:  []string{`DIR/web.yaml: Service default/web: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32`},
		},
		{
			name: "validation, several fields, several documents",
			files: map[string]string{"web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n" +
				strings.Replace(goodService, "{port: 80}", "{port: 0}, {port: 81, protocol: ICMP}", 1)},
			want: []string{
				`DIR/web.yaml (document 2): Service default/web: spec.ports[0].port: must be between 1 and 65535, got 0`,
				`DIR/web.yaml (document 2): Service default/web: spec.ports[1].protocol: unsupported protocol "ICMP"`,
			},
		},
		{
			name: "invalid ServiceCIDR",
			files: map[string]string{"cidr.yaml": "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\n" +
				"metadata: {name: extra}\nspec:\n  cidrs: [10.96.0.0/16, 'fd00::/300']\n"},
			want: []string{`DIR/cidr.yaml: ServiceCIDR extra: spec.cidrs[1]: invalid CIDR "fd00::/300"`},
		},
		{
			name: "validation inside a List",
			files: map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nitems:\n" +
				"- {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: s, namespace: ns, labels: {kubernetes.io/service-name: web}}, " +
				"addressType: IPv4, endpoints: [{addresses: [fd00::1]}]}\n"},
			want: []string{`DIR/list.yaml: items[0]: EndpointSlice ns/s: endpoints[0].addresses[0]: IPv6 address "fd00::1" in an IPv4 slice`},
		},
		{
			name:  "unknown List field",
			files: map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nitem: []\n"},
			want:  []string{`DIR/list.yaml: v1 List: unknown field "item"`},
		},
		{
			name: "duplicate object across files",
			files: map[string]string{
				"a.yaml": goodService,
				"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n" + strings.Replace(goodService, "{name: web}", "{name: web, namespace: default}", 1),
			},
			want: []string{`DIR/b.yaml (document 2): Service default/web: already defined in DIR/a.yaml`},
		},
		{
			name:  "missing kind, not an object",
			files: map[string]string{"x.yaml": "apiVersion: v1\nmetadata: {name: x}\n---\n- a\n- b\n"},
			want: []string{
				`DIR/x.yaml (document 1): object without apiVersion or kind (apiVersion "v1", kind "")`,
				`DIR/x.yaml (document 2): not an object`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			got, err := Load([]string{dir})
			if got != nil {
				t.Errorf("Load() returned a Result with an error: %+v", got)
			}
			checkLines(t, err, dir, tc.want)
		})
	}
}

// checkLines checks err has one line per entry of want, each containing it.
func checkLines(t *testing.T, err error, dir string, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("Load() returned no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) < len(want) {
		t.Fatalf("got %d error lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		w = strings.ReplaceAll(w, "DIR", dir)
		if !strings.Contains(lines[i], w) {
			t.Errorf("error line %d is %q, want it to contain %q", i, lines[i], w)
		}
	}
}

func TestLoadPathErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"empty/README.md": "", "ok.yaml": goodService})
	_, err := Load([]string{filepath.Join(dir, "missing"), filepath.Join(dir, "empty"), filepath.Join(dir, "ok.yaml")})
	checkLines(t, err, dir, []string{
		"stat DIR/missing: no such file or directory",
		"DIR/empty: no .yaml, .yml or .json files",
	})
}

// TestLoadCollectsAll checks errors from every file are reported together,
// and that an *kube.ObjectError can be recovered from the joined error.
func TestLoadCollectsAll(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml": strings.Replace(goodService, "10.96.0.10", "10.96.0.300", 1),
		"b.yaml": "a: 1\nb: : 2\n",
		"c.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: node1}\nspec: {podCIDR: nope}\n",
	})
	_, err := Load([]string{dir})
	checkLines(t, err, dir, []string{
		`DIR/a.yaml: Service default/web: spec.clusterIP: invalid IP address "10.96.0.300"`,
		`DIR/b.yaml: yaml: line 2: `,
		`DIR/c.yaml: Node node1: spec.podCIDR: invalid CIDR "nope"`,
	})
	var oe *kube.ObjectError
	if !errors.As(err, &oe) {
		t.Fatalf("errors.As(*kube.ObjectError) failed on %v", err)
	}
	want := []kube.FieldError{{Path: "spec.clusterIP", Detail: `invalid IP address "10.96.0.300"`}}
	if diff := cmp.Diff(want, oe.Fields); diff != "" {
		t.Errorf("ObjectError.Fields (-want +got):\n%s", diff)
	}
}
