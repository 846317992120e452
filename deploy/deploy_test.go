package deploy_test

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/deploy"
)

// manifests are the objects of deploy/base, one of each kind.
type manifests struct {
	sa      *corev1.ServiceAccount
	role    *rbacv1.ClusterRole
	binding *rbacv1.ClusterRoleBinding
	cm      *corev1.ConfigMap
	ds      *appsv1.DaemonSet
}

func load(t *testing.T) manifests {
	t.Helper()
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return sortObjects(t, objs)
}

// sortObjects puts each object in its field, failing on a kind seen twice or
// not expected, and on a kind missing.
func sortObjects(t *testing.T, objs []runtime.Object) manifests {
	t.Helper()
	var m manifests
	set := func(dst any, ok bool, o runtime.Object) {
		if !ok {
			t.Fatalf("%T given twice", o)
		}
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			set(m.sa, m.sa == nil, o)
			m.sa = o
		case *rbacv1.ClusterRole:
			set(m.role, m.role == nil, o)
			m.role = o
		case *rbacv1.ClusterRoleBinding:
			set(m.binding, m.binding == nil, o)
			m.binding = o
		case *corev1.ConfigMap:
			set(m.cm, m.cm == nil, o)
			m.cm = o
		case *appsv1.DaemonSet:
			set(m.ds, m.ds == nil, o)
			m.ds = o
		default:
			t.Fatalf("unexpected object %T", o)
		}
	}
	if m.sa == nil || m.role == nil || m.binding == nil || m.ds == nil {
		t.Fatalf("missing objects: %+v", m)
	}
	return m
}

func TestDecodeIsStrict(t *testing.T) {
	tests := []struct {
		name, doc, wantErr string
	}{
		{"valid", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n", ""},
		{"comments and empty documents", "# c\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\n", ""},
		{"unknown field", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\nautomount: true\n", `unknown field "automount"`},
		{"duplicate field", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\nmetadata: {name: b}\n", `"metadata" already set`},
		{"unknown kind", "apiVersion: v1\nkind: Frob\nmetadata: {name: a}\n", `no kind "Frob"`},
		{"wrong type", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: a}\nspec: {minReadySeconds: soon}\n", "minReadySeconds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := deploy.Decode([]byte(tc.doc))
			if tc.wantErr == "" {
				if err != nil || len(objs) != 1 {
					t.Fatalf("Decode = %d objects, %v; want 1, nil", len(objs), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Decode error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestNamespacedObjectsInKubeSystem(t *testing.T) {
	m := load(t)
	// system-node-critical is admitted in kube-system only, by default.
	for _, ns := range []string{m.sa.Namespace, m.cm.Namespace, m.ds.Namespace} {
		if ns != "kube-system" {
			t.Errorf("namespace %q, want kube-system", ns)
		}
	}
}

// TestRBACIsLeastPrivilege pins the exact grants: adding one must be a
// reviewed change of this test.
func TestRBACIsLeastPrivilege(t *testing.T) {
	m := load(t)
	want := []string{
		"/nodes:list", "/nodes:watch", "/services:list", "/services:watch",
		"discovery.k8s.io/endpointslices:list", "discovery.k8s.io/endpointslices:watch",
		"networking.k8s.io/servicecidrs:list", "networking.k8s.io/servicecidrs:watch",
		"/events:create", "/events:patch", "events.k8s.io/events:create", "events.k8s.io/events:patch",
	}
	var got []string
	for i, r := range m.role.Rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("rules[%d]: resourceNames or nonResourceURLs set", i)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					got = append(got, g+"/"+res+":"+v)
				}
			}
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterRole grants (-want +got):\n%s", diff)
	}
	wantRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: m.role.Name}
	if diff := cmp.Diff(wantRef, m.binding.RoleRef); diff != "" {
		t.Errorf("roleRef (-want +got):\n%s", diff)
	}
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: m.sa.Name, Namespace: m.sa.Namespace}}
	if diff := cmp.Diff(wantSubjects, m.binding.Subjects); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
	if m.ds.Spec.Template.Spec.ServiceAccountName != m.sa.Name {
		t.Errorf("DaemonSet serviceAccountName %q, want %q", m.ds.Spec.Template.Spec.ServiceAccountName, m.sa.Name)
	}
}

// TestConfigMapHoldsTheDefaults loads the ConfigMap's file with the agent's
// own loader: it must be valid, warning-free, and exactly the defaults, as
// its comment promises.
func TestConfigMapHoldsTheDefaults(t *testing.T) {
	m := load(t)
	data, ok := m.cm.Data[configKey]
	if !ok {
		t.Fatalf("ConfigMap has no key %q", configKey)
	}
	c, warnings, err := config.Parse([]byte(data))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("config.Parse: %v, warnings %q", err, warnings)
	}
	if err := config.Validate(c); err != nil {
		t.Fatalf("config.Validate: %v", err)
	}
	if diff := cmp.Diff(config.Default(), c); diff != "" {
		t.Errorf("ConfigMap config differs from the defaults (-want +got):\n%s", diff)
	}
}

// configKey is the ConfigMap key holding the file, as in kube-proxy's.
const configKey = "config.conf"

func TestDaemonSetScheduling(t *testing.T) {
	ds := load(t).ds
	spec := ds.Spec.Template.Spec
	if !spec.HostNetwork {
		t.Error("hostNetwork must be true: the rules go into the node's namespace")
	}
	if spec.PriorityClassName != "system-node-critical" {
		t.Errorf("priorityClassName %q", spec.PriorityClassName)
	}
	// Tolerating every taint is one toleration: operator Exists, no key, no effect.
	all := slices.ContainsFunc(spec.Tolerations, func(tl corev1.Toleration) bool {
		return tl.Operator == corev1.TolerationOpExists && tl.Key == "" && tl.Effect == ""
	})
	if !all {
		t.Errorf("tolerations %+v do not tolerate every taint", spec.Tolerations)
	}
	u := ds.Spec.UpdateStrategy
	if u.Type != appsv1.RollingUpdateDaemonSetStrategyType || u.RollingUpdate == nil ||
		u.RollingUpdate.MaxUnavailable == nil || *u.RollingUpdate.MaxUnavailable != intstr.FromInt32(1) {
		t.Errorf("updateStrategy %+v, want RollingUpdate with maxUnavailable 1", u)
	}
	if u.RollingUpdate != nil && u.RollingUpdate.MaxSurge != nil && u.RollingUpdate.MaxSurge.IntValue() != 0 {
		t.Errorf("maxSurge %v: two Pods on a node would both bind the healthz port", u.RollingUpdate.MaxSurge)
	}
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("want exactly one container and no init containers, got %d and %d", len(spec.Containers), len(spec.InitContainers))
	}
	sel := ds.Spec.Selector.MatchLabels
	for k, v := range sel {
		if ds.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the template's labels", k, v)
		}
	}
}

func TestDaemonSetSecurity(t *testing.T) {
	c := load(t).ds.Spec.Template.Spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil {
		t.Fatal("no securityContext.capabilities")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("privileged: the container must run with capabilities only")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation must be false")
	}
	if diff := cmp.Diff([]corev1.Capability{"ALL"}, sc.Capabilities.Drop); diff != "" {
		t.Errorf("capabilities.drop (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Capabilities, sc.Capabilities.Add); diff != "" {
		t.Errorf("capabilities.add (-want +got):\n%s", diff)
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Error("runAsUser must be 0: added capabilities are granted to root only")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem must be true")
	}
	req := c.Resources.Requests
	if req.Cpu().IsZero() || req.Memory().IsZero() {
		t.Errorf("resource requests %v: want cpu and memory", req)
	}
}

// Capabilities is what the container adds: NET_ADMIN only, see the
// comment in daemonset.yaml. integration/failure/capabilities_test.go runs
// the binary with the set the manifest names.
var Capabilities = []corev1.Capability{"NET_ADMIN"}

func TestDaemonSetArgsAndConfig(t *testing.T) {
	m := load(t)
	spec := m.ds.Spec.Template.Spec
	c := spec.Containers[0]
	if !slices.Contains(c.Args, "--hostname-override=$(NODE_NAME)") {
		t.Errorf("args %q: want --hostname-override=$(NODE_NAME)", c.Args)
	}
	env := envByName(c.Env)
	if f := env["NODE_NAME"].ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("NODE_NAME must come from the downward API's spec.nodeName, got %+v", env["NODE_NAME"])
	}
	for _, name := range []string{"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"} {
		// Required here would keep every Pod from starting until an operator
		// created the ConfigMap.
		if r := env[name].ValueFrom; r != nil && r.ConfigMapKeyRef != nil && (r.ConfigMapKeyRef.Optional == nil || !*r.ConfigMapKeyRef.Optional) {
			t.Errorf("%s: the ConfigMap key must be optional", name)
		}
	}
	path := configPath(t, c.Args)
	mount := mountFor(t, c.VolumeMounts, path)
	vol := volumeByName(t, spec.Volumes, mount.Name)
	if vol.ConfigMap == nil || vol.ConfigMap.Name != m.cm.Name {
		t.Fatalf("volume %q is not the ConfigMap %q", vol.Name, m.cm.Name)
	}
	rel := strings.TrimPrefix(path, strings.TrimSuffix(mount.MountPath, "/")+"/")
	found := slices.ContainsFunc(vol.ConfigMap.Items, func(k corev1.KeyToPath) bool { return k.Key == configKey && k.Path == rel })
	if !found && len(vol.ConfigMap.Items) > 0 {
		t.Errorf("--config %s is not the ConfigMap key %q (items %+v)", path, configKey, vol.ConfigMap.Items)
	}
}

// TestProbesUseHealthzPort checks that both probes reach the healthz server
// at the port the configuration binds it to.
func TestProbesUseHealthzPort(t *testing.T) {
	m := load(t)
	c := m.ds.Spec.Template.Spec.Containers[0]
	cfg, _, err := config.Parse([]byte(m.cm.Data[configKey]))
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(cfg.HealthzBindAddress)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"readiness", c.ReadinessProbe, "/healthz"},
		{"liveness", c.LivenessProbe, "/livez"},
		{"startup", c.StartupProbe, "/livez"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.probe == nil || tc.probe.HTTPGet == nil {
				t.Fatal("no httpGet probe")
			}
			if tc.probe.HTTPGet.Path != tc.path {
				t.Errorf("path %q, want %q", tc.probe.HTTPGet.Path, tc.path)
			}
			if got := resolvePort(t, c.Ports, tc.probe.HTTPGet.Port); got != port {
				t.Errorf("port %s, want the healthz port %s", got, port)
			}
		})
	}
}

// TestKustomizeRendersTheSameObjects renders deploy/ and deploy/kubeadm with
// kubectl's built-in kustomize, when kubectl is installed: deploy/ must give
// exactly Objects(), and the kubeadm overlay must mount kube-proxy's ConfigMap.
func TestKustomizeRendersTheSameObjects(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed: cannot render the kustomizations")
	}
	want, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	got := render(t, kubectl, ".")
	if diff := cmp.Diff(sortObjects(t, want), sortObjects(t, got), cmp.AllowUnexported(manifests{})); diff != "" {
		t.Errorf("kubectl kustomize deploy/ differs from deploy.Objects() (-want +got):\n%s", diff)
	}
	kubeadm := sortObjects(t, render(t, kubectl, "kubeadm"))
	if kubeadm.cm != nil {
		t.Errorf("the kubeadm overlay keeps ConfigMap %s", kubeadm.cm.Name)
	}
	c := kubeadm.ds.Spec.Template.Spec.Containers[0]
	path := configPath(t, c.Args)
	mount := mountFor(t, c.VolumeMounts, path)
	vol := volumeByName(t, kubeadm.ds.Spec.Template.Spec.Volumes, mount.Name)
	if vol.ConfigMap == nil || vol.ConfigMap.Name != "kube-proxy" || path != "/var/lib/kube-proxy/config.conf" {
		t.Errorf("kubeadm overlay: --config %s from volume %+v, want kube-proxy's config.conf at /var/lib/kube-proxy", path, vol)
	}
}

func render(t *testing.T, kubectl, dir string) []runtime.Object {
	t.Helper()
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	objs, err := deploy.Decode(out)
	if err != nil {
		t.Fatalf("decode kubectl kustomize %s: %v", dir, err)
	}
	return objs
}

// TestDockerfileGoVersion keeps the image's Go toolchain in step with go.mod.
func TestDockerfileGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	got := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)`).FindSubmatch(file)
	if want == nil || got == nil {
		t.Fatalf("go directive %q, Dockerfile GO_VERSION %q", want, got)
	}
	if string(got[1]) != string(want[1]) {
		t.Errorf("Dockerfile GO_VERSION %s, go.mod wants go %s", got[1], want[1])
	}
	if !strings.Contains(string(file), "CGO_ENABLED=0") {
		t.Error("the binary must be static (CGO_ENABLED=0): the runtime image has no libc")
	}
}
