package deploy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// chart is the Helm chart's directory, relative to this package.
const chart = "helm/nftproxy"

// helmOnly are the fields the chart adds to deploy/'s objects with default
// values, and why: the only differences allowed.
var helmOnly = map[string]string{
	"checksum/config": "the Pod template's hash of the ConfigMap: `helm upgrade` with a changed " +
		"configuration rolls the Pods, which read the file once",
}

// tool finds a command for the chart tests: $ENV, else NAME on PATH, else
// the test is skipped (hack/test-chart.sh builds both and sets them).
func tool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found (set %s, or run make test-chart): cannot render the chart", name, env)
	}
	return p
}

// helmTemplate renders the chart as release "nftproxy" in kube-system with
// extra helm arguments; it returns the output and the error with helm's
// stderr.
func helmTemplate(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	helm := tool(t, "HELM", "helm")
	all := append([]string{"template", "nftproxy", chart, "--namespace", "kube-system"}, args...)
	return run(helm, all...)
}

func run(name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// objects decodes rendered YAML into plain maps keyed "Kind namespace/name",
// with a ConfigMap's config.conf decoded too, so that its fields compare one
// by one (the kustomize file carries comments, the chart's does not).
func objects(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		if obj == nil {
			continue
		}
		decodeConfig(t, obj)
		meta, _ := obj["metadata"].(map[string]any)
		key := fmt.Sprintf("%s %v", obj["kind"], meta["name"])
		if ns, ok := meta["namespace"]; ok {
			key = fmt.Sprintf("%s %v/%v", obj["kind"], ns, meta["name"])
		}
		if _, dup := out[key]; dup {
			t.Fatalf("%s rendered twice", key)
		}
		out[key] = obj
	}
}

func decodeConfig(t *testing.T, obj map[string]any) {
	t.Helper()
	data, _ := obj["data"].(map[string]any)
	text, ok := data["config.conf"].(string)
	if obj["kind"] != "ConfigMap" || !ok {
		return
	}
	var conf map[string]any
	if err := yaml.Unmarshal([]byte(text), &conf); err != nil {
		t.Fatalf("config.conf: %v", err)
	}
	data["config.conf"] = conf
}

// dropHelmOnly removes the helmOnly annotations from a rendered DaemonSet's
// Pod template, failing when one is missing.
func dropHelmOnly(t *testing.T, objs map[string]map[string]any) {
	t.Helper()
	ds := objs["DaemonSet kube-system/nftproxy"]
	tmpl, _ := lookup(ds, "spec", "template", "metadata").(map[string]any)
	annotations, _ := tmpl["annotations"].(map[string]any)
	for name := range helmOnly {
		if _, ok := annotations[name]; !ok {
			t.Errorf("the chart's DaemonSet has no Pod annotation %s", name)
		}
		delete(annotations, name)
	}
	if tmpl != nil && len(annotations) == 0 {
		delete(tmpl, "annotations")
	}
}

func lookup(obj any, path ...string) any {
	for _, p := range path {
		m, ok := obj.(map[string]any)
		if !ok {
			return nil
		}
		obj = m[p]
	}
	return obj
}

// leaves counts the scalar fields of a decoded object.
func leaves(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range v {
			n += leaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += leaves(e)
		}
		return n
	default:
		return 1
	}
}

// compare fails on every object one side has and the other has not, and on
// every field that differs; it logs each object found equal.
func compare(t *testing.T, what string, want, got map[string]map[string]any) {
	t.Helper()
	keys := make([]string, 0, len(want)+len(got))
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot:
			t.Errorf("%s: %s is missing from the chart", what, k)
		case !inWant:
			t.Errorf("%s: the chart adds %s", what, k)
		default:
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s: %s differs (-kustomize +chart):\n%s", what, k, diff)
			} else {
				t.Logf("%s: %-45s same, %d fields", what, k, leaves(w))
			}
		}
	}
}

// TestChartDefaultsMatchKustomize: with default values the chart renders the
// objects of `kubectl kustomize deploy/`, field by field, and with
// kubeProxyConfigMap=kube-proxy those of deploy/kubeadm; only helmOnly
// differs.
func TestChartDefaultsMatchKustomize(t *testing.T) {
	kubectl := tool(t, "KUBECTL", "kubectl")
	tests := []struct {
		name, dir string
		args      []string
		helmOnly  bool
	}{
		{"deploy/", ".", nil, true},
		{"deploy/kubeadm", "kubeadm", []string{"--set", "kubeProxyConfigMap=kube-proxy"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kustomized, err := run(kubectl, "kustomize", tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := helmTemplate(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			got := objects(t, rendered)
			if tc.helmOnly {
				dropHelmOnly(t, got)
			}
			compare(t, tc.name, objects(t, kustomized), got)
		})
	}
}

// TestChartRejectsBadValues: bad values fail `helm template` with a message
// that names the value (values.schema.json, or the chart's own checks for
// what a schema cannot express).
func TestChartRejectsBadValues(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown value", []string{"--set", "tolerance=all"}, []string{"'tolerance' not allowed"}},
		{"unknown config field", []string{"--set", "config.minSyncPerod=1s"}, []string{"/config", "'minSyncPerod' not allowed"}},
		{"detectLocalMode", []string{"--set", "config.detectLocalMode=PodCIDR"}, []string{"/config/detectLocalMode", "ClusterCIDR"}},
		{"duration", []string{"--set", "config.syncPeriod=soon"}, []string{"/config/syncPeriod", "does not match pattern"}},
		{"masqueradeBit range", []string{"--set", "config.masqueradeBit=40"}, []string{"/config/masqueradeBit", "maximum"}},
		{"qps type", []string{"--set", "config.clientConnection.qps=fast"}, []string{"/config/clientConnection/qps", "number"}},
		{"healthz port", []string{"--set", "config.healthzBindAddress=0.0.0.0"}, []string{"/config/healthzBindAddress"}},
		{"update strategy", []string{"--set", "updateStrategy.type=Recreate"}, []string{"/updateStrategy/type", "OnDelete"}},
		{"empty tag", []string{"--set", "image.tag="}, []string{"/image/tag"}},
		{"pull policy", []string{"--set", "image.pullPolicy=Sometimes"}, []string{"/image/pullPolicy"}},
		{"resources", []string{"--set", "resources=100m"}, []string{"/resources", "object"}},
		{"extra arg", []string{"--set", "extraArgs[0]=v=4"}, []string{"/extraArgs/0", "does not match pattern"}},
		{"metrics on loopback", []string{"--set", "metrics.service.enabled=true"},
			[]string{"metrics.service.enabled needs config.metricsBindAddress off loopback"}},
		{"metrics port", []string{"--set", "metrics.service.enabled=true", "--set", "config.metricsBindAddress=0.0.0.0:9100"},
			[]string{"metrics.service.port 10249 is not the port of config.metricsBindAddress"}},
		{"ServiceMonitor alone", []string{"--set", "metrics.serviceMonitor.enabled=true"},
			[]string{"metrics.serviceMonitor.enabled needs metrics.service.enabled"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(t, tc.args...)
			if err == nil {
				t.Fatalf("helm template %v succeeded, want an error", tc.args)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestChartLint: helm lint passes with the defaults and with every optional
// object on, and fails on a bad value.
func TestChartLint(t *testing.T) {
	helm := tool(t, "HELM", "helm")
	if out, err := run(helm, "lint", "--strict", chart); err != nil {
		t.Errorf("helm lint: %v\n%s", err, out)
	}
	if out, err := run(helm, append([]string{"lint", "--strict", chart}, allOptional...)...); err != nil {
		t.Errorf("helm lint with every optional object: %v\n%s", err, out)
	}
	out, err := run(helm, "lint", chart, "--set", "config.masqueradeBit=40")
	if err == nil || !strings.Contains(string(out), "masqueradeBit") {
		t.Errorf("helm lint with masqueradeBit=40: %v, want a failure naming it:\n%s", err, out)
	}
}

// allOptional turns on every object the defaults leave out.
var allOptional = []string{
	"--set", "metrics.service.enabled=true", "--set", "config.metricsBindAddress=0.0.0.0:10249",
	"--set", "metrics.serviceMonitor.enabled=true", "--set", "apiServer.host=192.0.2.10", "--set", "apiServer.port=6443",
}

// TestChartOptionalObjects: the metrics Service selects the DaemonSet's Pods
// on the metrics port, the ServiceMonitor selects that Service, and the
// apiserver ConfigMap is the one the DaemonSet reads.
func TestChartOptionalObjects(t *testing.T) {
	rendered, err := helmTemplate(t, allOptional...)
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, rendered)
	ds := objs["DaemonSet kube-system/nftproxy"]
	svc := objs["Service kube-system/nftproxy-metrics"]
	sm := objs["ServiceMonitor kube-system/nftproxy"]
	api := objs["ConfigMap kube-system/nftproxy-apiserver"]
	if ds == nil || svc == nil || sm == nil || api == nil {
		t.Fatalf("missing objects; rendered %v", slices.Sorted(maps.Keys(objs)))
	}
	podLabels := lookup(ds, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range lookup(svc, "spec", "selector").(map[string]any) {
		if podLabels[k] != v {
			t.Errorf("the metrics Service selects %s=%v; the Pods have %v", k, v, podLabels)
		}
	}
	port := lookup(svc, "spec", "ports").([]any)[0].(map[string]any)
	if port["name"] != "metrics" || port["targetPort"] != float64(10249) || lookup(svc, "spec", "clusterIP") != "None" {
		t.Errorf("metrics Service: port %v, clusterIP %v; want headless, metrics 10249", port, lookup(svc, "spec", "clusterIP"))
	}
	svcLabels := lookup(svc, "metadata", "labels").(map[string]any)
	for k, v := range lookup(sm, "spec", "selector", "matchLabels").(map[string]any) {
		if svcLabels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v; the Service has %v", k, v, svcLabels)
		}
	}
	if got := lookup(api, "data"); !cmp.Equal(got, map[string]any{"host": "192.0.2.10", "port": "6443"}) {
		t.Errorf("apiserver ConfigMap data %v", got)
	}
	js, _ := json.Marshal(ds)
	if !strings.Contains(string(js), `"name":"nftproxy-apiserver"`) {
		t.Error("the DaemonSet does not read ConfigMap nftproxy-apiserver")
	}
}

// TestChartConfigChangeRollsPods: a changed configuration value changes the
// Pod template (and so `helm upgrade` replaces the Pods), and lands in
// config.conf.
func TestChartConfigChangeRollsPods(t *testing.T) {
	checksum := func(args ...string) (string, any) {
		rendered, err := helmTemplate(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		objs := objects(t, rendered)
		sum := lookup(objs["DaemonSet kube-system/nftproxy"], "spec", "template", "metadata", "annotations", "checksum/config")
		return fmt.Sprint(sum), lookup(objs["ConfigMap kube-system/nftproxy"], "data", "config.conf", "minSyncPeriod")
	}
	before, _ := checksum()
	after, period := checksum("--set", "config.minSyncPeriod=2s")
	if before == after {
		t.Errorf("checksum/config %s did not change with config.minSyncPeriod", before)
	}
	if period != "2s" {
		t.Errorf("config.conf minSyncPeriod %v, want 2s", period)
	}
}
