package deploy_test

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func envByName(env []corev1.EnvVar) map[string]corev1.EnvVar {
	m := make(map[string]corev1.EnvVar, len(env))
	for _, e := range env {
		m[e.Name] = e
	}
	return m
}

// configPath returns the value of the --config flag.
func configPath(t *testing.T, args []string) string {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v
		}
	}
	t.Fatalf("args %q have no --config=FILE", args)
	return ""
}

// mountFor returns the volume mount that holds path.
func mountFor(t *testing.T, mounts []corev1.VolumeMount, path string) corev1.VolumeMount {
	t.Helper()
	for _, m := range mounts {
		if strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			return m
		}
	}
	t.Fatalf("no volume mount holds %s", path)
	return corev1.VolumeMount{}
}

func volumeByName(t *testing.T, vols []corev1.Volume, name string) corev1.Volume {
	t.Helper()
	for _, v := range vols {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %q", name)
	return corev1.Volume{}
}

// resolvePort returns a probe's port as a number, looking a named port up
// in the container's ports.
func resolvePort(t *testing.T, ports []corev1.ContainerPort, p intstr.IntOrString) string {
	t.Helper()
	if p.Type == intstr.Int {
		return strconv.Itoa(p.IntValue())
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return strconv.Itoa(int(cp.ContainerPort))
		}
	}
	t.Fatalf("no container port named %q", p.StrVal)
	return ""
}
