// Package deploy holds nftproxy's Kubernetes manifests (the YAML files in
// base/, listed by base/kustomization.yaml) and decodes them strictly into
// their Kubernetes Go types, for tests and for tools that apply them.
//
// # Files
//
//   - base/daemonset.yaml: one Pod per Linux node, host network, NET_ADMIN only
//   - base/configmap.yaml: the default ProxyConfiguration, every field documented
//   - base/serviceaccount.yaml, base/clusterrole.yaml, base/clusterrolebinding.yaml:
//     least-privilege RBAC
//   - kustomization.yaml: `kubectl apply -k deploy/` (base, unchanged)
//   - kubeadm/: an overlay that reuses kubeadm's kube-proxy ConfigMap
//     (kustomize refuses an overlay inside its base's folder, hence base/)
//   - Dockerfile: the image (`make image`)
//   - helm/nftproxy: a Helm chart of the same objects, the configuration as
//     values; chart_test.go compares its default rendering with kustomize's
//   - monitoring/: alert rules, their promtool tests and a Grafana dashboard
//     (package monitoring)
//
// docs/operations.md explains installing, replacing kube-proxy and
// troubleshooting.
package deploy

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

//go:embed base/*.yaml
var files embed.FS

// dir is where the embedded manifests are.
const dir = "base/"

// kustomization is the part of kustomization.yaml this package understands.
// It is decoded strictly on purpose: a transformer added there (images,
// patches, namespace, ...) would change what kubectl applies but not what
// Objects returns, so it must fail the tests until Objects learns it.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// scheme knows the kinds the manifests may hold; anything else is an error.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // only on a programming error in k8s.io/api
		}
	}
	return s
}()

// Objects returns the objects of base/kustomization.yaml's resources, in its
// order, decoded as the API server would decode them strictly: an unknown or
// duplicate field, or an unknown kind, is an error naming the file.
func Objects() ([]runtime.Object, error) {
	names, err := Resources()
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, name := range names {
		data, err := files.ReadFile(dir + name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		got, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

// Resources returns the file names base/kustomization.yaml lists, in order.
func Resources() ([]string, error) {
	data, err := files.ReadFile(dir + "kustomization.yaml")
	if err != nil {
		return nil, fmt.Errorf("read kustomization.yaml: %w", err)
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	var k kustomization
	strict, err := sigsjson.UnmarshalStrict(js, &k, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err = errors.Join(append([]error{err}, strict...)...); err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	return k.Resources, nil
}

// Decode decodes every YAML document of data strictly into its Go type
// (empty documents are skipped).
func Decode(data []byte) ([]runtime.Object, error) {
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if empty(doc) {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		objs = append(objs, obj)
	}
}

// empty reports whether a YAML document holds no object (only comments, or
// nothing), as the one before a leading "---" does.
func empty(doc []byte) bool {
	js, err := yaml.YAMLToJSON(doc)
	return err == nil && (len(bytes.TrimSpace(js)) == 0 || string(js) == "null")
}
