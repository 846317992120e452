package config

import (
	"fmt"
	"io"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxy "k8s.io/kube-proxy/config/v1alpha1"
	"sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Load reads the configuration file at path: nftproxy's own kind or a
// kube-proxy KubeProxyConfiguration. It returns the defaults overlaid with the
// file, and warnings about fields that were read but have no effect. It does
// not validate: the caller overlays flags first, then calls Validate.
//
// On error the configuration is nil; the warnings found so far are returned.
func Load(path string) (*Configuration, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	c, warnings, err := Parse(data)
	if err != nil {
		return nil, warnings, fmt.Errorf("load %s: %w", path, err)
	}
	return c, warnings, nil
}

// Parse is Load for the contents of a file (YAML or JSON), for example the
// value of a ConfigMap key.
func Parse(data []byte) (*Configuration, []string, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("parse YAML: %w", err)
	}
	var tm metav1.TypeMeta
	if err := json.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return nil, nil, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	kubeProxyAPIVersion := kubeproxy.SchemeGroupVersion.String()
	switch {
	case tm.APIVersion == APIVersion && tm.Kind == Kind:
		c, err := decodeOwn(data)
		return c, nil, err
	case tm.APIVersion == kubeProxyAPIVersion && tm.Kind == kubeProxyKind:
		return decodeKubeProxy(js)
	}
	return nil, nil, fmt.Errorf("unsupported apiVersion %q kind %q (supported: %s %s, %s %s)",
		tm.APIVersion, tm.Kind, APIVersion, Kind, kubeProxyAPIVersion, kubeProxyKind)
}

// decodeOwn decodes nftproxy's own kind over the defaults. Decoding is
// strict: our kind is new, so a field we do not know is a typo that would
// otherwise be silently replaced by a default, and duplicate keys are
// ambiguous. Matching is case-sensitive, unlike encoding/json's.
func decodeOwn(data []byte) (*Configuration, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	c := Default()
	strictErrs, err := json.UnmarshalStrict(js, c, json.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", Kind, err)
	}
	if errs := unknownFields(strictErrs); len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// unknownFields turns the strict errors of json.UnmarshalStrict called with
// only DisallowUnknownFields (so every one is an unknown field) into an
// ErrorList naming each field.
func unknownFields(strictErrs []error) ErrorList {
	var errs ErrorList
	for _, e := range strictErrs {
		path := e.Error()
		if fe, ok := e.(json.FieldError); ok {
			path = fe.FieldPath()
		}
		errs.add(path, "unknown field")
	}
	return errs
}

// Write writes c as a YAML file of nftproxy's own kind: the effective
// configuration (for --write-config-to), which Load reads back unchanged.
// c is not modified.
func Write(w io.Writer, c *Configuration) error {
	// apiVersion and kind go first, for the reader; yaml.Marshal would sort
	// them among the other keys. Their tags are omitempty, so clearing them
	// leaves them out of the body.
	body := *c
	body.TypeMeta = metav1.TypeMeta{}
	data, err := yaml.Marshal(&body)
	if err != nil {
		return fmt.Errorf("encode %s: %w", Kind, err)
	}
	header := "apiVersion: " + APIVersion + "\nkind: " + Kind + "\n"
	if _, err := io.WriteString(w, header+string(data)); err != nil {
		return fmt.Errorf("write %s: %w", Kind, err)
	}
	return nil
}
