//go:build integration

package failure

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nftproxy/nftproxy/deploy"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// capNumbers are the capabilities the DaemonSet may name, by number
// (linux/capability.h), to check the effective set a process really got.
var capNumbers = map[corev1.Capability]uint{"NET_ADMIN": 12, "NET_RAW": 13, "SYS_ADMIN": 21, "SYS_RESOURCE": 24, "SYS_MODULE": 16}

// daemonSetCapabilities returns the capabilities deploy/'s DaemonSet adds
// after dropping ALL.
func daemonSetCapabilities(t *testing.T) []corev1.Capability {
	t.Helper()
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			sc := ds.Spec.Template.Spec.Containers[0].SecurityContext
			if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
				t.Fatalf("the DaemonSet drops %v, not ALL: this test would not mirror it", sc.Capabilities.Drop)
			}
			return sc.Capabilities.Add
		}
	}
	t.Fatal("no DaemonSet in deploy/")
	return nil
}

// withCapabilities wraps args so that they run as root with exactly caps,
// as a container runtime starts a container with capabilities.drop ALL and
// capabilities.add caps: the bounding set is caps and nothing is inherited,
// so root's permitted and effective sets are caps; no_new_privs mirrors
// allowPrivilegeEscalation: false.
func withCapabilities(caps []corev1.Capability, args ...string) []string {
	bounding := "-all"
	for _, c := range caps {
		bounding += ",+" + strings.ToLower(string(c))
	}
	return append([]string{"setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=" + bounding, "--no-new-privs", "--"}, args...)
}

// effectiveCaps returns the CapEff mask of a process started like args.
func effectiveCaps(t *testing.T, ns *lab.NS, caps []corev1.Capability) uint64 {
	t.Helper()
	out := ns.MustExec(t, withCapabilities(caps, "grep", "^CapEff:", "/proc/self/status")...)
	v, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "CapEff:")), 16, 64)
	if err != nil {
		t.Fatalf("parse %q: %v", out, err)
	}
	return v
}

// TestDaemonSetCapabilitiesSuffice runs `nftproxy apply` with exactly the
// capabilities of deploy/'s DaemonSet, then with none: the first must
// program the kernel (nftables over netlink, forced socket buffers), the
// second must be refused. The effective set is checked first, so that the
// test cannot pass by running with full root privileges.
func TestDaemonSetCapabilitiesSuffice(t *testing.T) {
	caps := daemonSetCapabilities(t)
	bin := lab.Nftproxy(t)
	tests := []struct {
		name string
		caps []corev1.Capability
		ok   bool
	}{
		{"the DaemonSet's capabilities", caps, true},
		{"no capabilities", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := lab.NewNS(t, "caps")
			var want uint64
			for _, c := range tc.caps {
				n, ok := capNumbers[c]
				if !ok {
					t.Fatalf("capability %s: add its number to capNumbers", c)
				}
				want |= 1 << n
			}
			if got := effectiveCaps(t, ns, tc.caps); got != want {
				t.Fatalf("effective capabilities %#x, want %#x: setpriv does not give what the DaemonSet gives", got, want)
			}
			out, err := ns.Exec(withCapabilities(tc.caps, bin, "apply", "-f", examples(t))...)
			listed, listErr := ns.Exec("nft", "list", "table", "ip", "kube-proxy")
			switch {
			case tc.ok && (err != nil || listErr != nil):
				t.Fatalf("apply with %v: %v %s; nft list: %v", tc.caps, err, out, listErr)
			case !tc.ok && err == nil:
				t.Fatalf("apply without capabilities succeeded: %s\n%s", out, listed)
			case !tc.ok && !strings.Contains(err.Error()+out, "operation not permitted"):
				t.Errorf("apply without capabilities failed, but not with EPERM: %v %s", err, out)
			}
			if !tc.ok {
				// Past the socket buffers too: nftables itself refuses.
				if out, err := ns.Exec(withCapabilities(tc.caps, "nft", "list", "tables")...); err == nil {
					t.Errorf("nft list tables without capabilities succeeded: %s", out)
				}
			}
			t.Logf("%s: %s", tc.name, firstLine(fmt.Sprint(out, err)))
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
