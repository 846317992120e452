//go:build integration

package manifests

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nftproxy/nftproxy/deploy"
	"github.com/nftproxy/nftproxy/integration/apiserver"
	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
)

// TestAgentRunsWithDeployPermissions runs nftproxy the way deploy/ does on
// a node, as far as a lab allows: as deploy/'s ServiceAccount (its RBAC
// objects created for real, the admin credentials impersonating the
// account) and with only the DaemonSet's capabilities. It must program a
// Service and the API server's ServiceCIDR, publish a Warning event about
// a bad Service (events are the only thing it writes), and log no
// "forbidden".
func TestAgentRunsWithDeployPermissions(t *testing.T) {
	env := e2e.New(t, 2)
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var sa *corev1.ServiceAccount
	var caps []corev1.Capability
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap, *appsv1.DaemonSet:
			if ds, ok := o.(*appsv1.DaemonSet); ok {
				caps = ds.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Add
			}
			continue // the agent runs from the test, with the lab's flags
		case *corev1.ServiceAccount:
			sa = o
		}
		if err := create(env.Ctx, env.Kube, o, false); err != nil {
			t.Fatalf("create %s: %v", describe(o), err)
		}
	}
	kubeconfig := impersonating(t, env.API.Kubeconfig, "system:serviceaccount:"+sa.Namespace+":"+sa.Name)
	agent := startAs(t, env, kubeconfig, caps)

	env.CreateClash(t, "10.96.12.10", "10.96.12.20")
	e2e.Eventually(t, "a Warning event about web-clash", env.Warned("web-clash", ""))
	e2e.Eventually(t, "the API server's ServiceCIDR programmed (list and watch granted)", func() error {
		p, err := e2e.ReadProgrammed(env.Lab)
		if err != nil {
			return err
		}
		if got := p.ServiceCIDRs(nft.IPv4); !slices.Equal(got, []netip.Prefix{apiserver.ServiceCIDR}) {
			return fmt.Errorf("service-cidrs %v, want %v", got, apiserver.ServiceCIDR)
		}
		return nil
	})
	if done, _ := agent.Exited(); done {
		t.Fatal(agent.Failure())
	}
	log, err := os.ReadFile(agent.Log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(string(log)), "forbidden") {
		t.Errorf("the agent was refused something deploy/'s ClusterRole does not grant:\n%s", agent.Tail())
	}
}

// impersonating writes a copy of kubeconfig whose user acts as user.
func impersonating(t *testing.T, kubeconfig, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// startAs runs nftproxy in the lab's node with e2e's flags, kubeconfig
// instead of the admin's, and exactly caps (see withCapabilities).
func startAs(t *testing.T, env *e2e.Env, kubeconfig string, caps []corev1.Capability) *lab.Process {
	t.Helper()
	args := []string{lab.Nftproxy(t), "--kubeconfig=" + kubeconfig}
	for _, a := range env.ProxyArgs() {
		if !strings.HasPrefix(a, "--kubeconfig=") {
			args = append(args, a)
		}
	}
	return env.Lab.Node.StartLogged(t, "nftproxy", filepath.Join(t.TempDir(), "nftproxy.log"), withCapabilities(caps, args...)...)
}

// withCapabilities wraps args so that they run as root with exactly caps,
// as a container with capabilities.drop ALL and capabilities.add caps:
// the bounding set is caps and nothing is inherited.
func withCapabilities(caps []corev1.Capability, args ...string) []string {
	bounding := "-all"
	for _, c := range caps {
		bounding += ",+" + strings.ToLower(string(c))
	}
	return append([]string{"setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=" + bounding, "--no-new-privs", "--"}, args...)
}
