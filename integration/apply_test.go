//go:build integration

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/manifest"
)

// TestApplyCommand runs the nftproxy binary inside a node namespace, the
// way an operator would: a first apply creates the tables as compiled, a
// second changes nothing, an edited manifest is applied as a small patch, a
// bad manifest is refused with a precise error and changes nothing, and
// cleanup removes both tables.
func TestApplyCommand(t *testing.T) {
	node := lab.NewNS(t, "node") // skips unless root
	bin := lab.Nftproxy(t)
	examples, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("first apply creates the tables", func(t *testing.T) {
		out := runOK(t, node, bin, "apply", "-f", examples)
		t.Logf("output: %s", out)
		if !strings.HasPrefix(out, "applied ") || !strings.Contains(out, "(tables replaced)") {
			t.Errorf("summary %q, want the tables replaced", out)
		}
		assertHolds(t, node, examples)
	})
	t.Run("second apply changes nothing", func(t *testing.T) {
		if out := runOK(t, node, bin, "apply", "-f", examples); !strings.HasPrefix(out, "no changes\n") {
			t.Errorf("summary %q, want \"no changes\"", out)
		}
	})
	t.Run("an edited slice is a small patch", func(t *testing.T) {
		dir := editedExamples(t, examples, "clusterip.yaml", "addresses: [10.244.3.2]", "addresses: [10.244.3.9]")
		out := runOK(t, node, bin, "apply", "-f", dir)
		t.Logf("output: %s", out)
		if n := appliedOps(out); !strings.Contains(out, "(tables patched)") || n < 1 || n >= 10 {
			t.Errorf("summary %q, want a patch of fewer than 10 operations", out)
		}
		assertHolds(t, node, dir)
	})
	t.Run("a bad manifest changes nothing", func(t *testing.T) {
		dir := editedExamples(t, examples, "loadbalancer.yaml", "externalIPs: [192.0.2.50]", "externalIPs: [192.0.2.500]")
		before := nftIn(t, node, "list", "ruleset")
		_, stderr, err := runIn(node, bin, "apply", "-f", dir)
		t.Logf("error output: %s", stderr)
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("apply of a bad manifest: err = %v, want a non-zero exit", err)
		}
		for _, want := range []string{filepath.Join(dir, "loadbalancer.yaml"), "Service demo/api", "spec.externalIPs[0]", "192.0.2.500"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("error %q does not name %q", stderr, want)
			}
		}
		if diff := diffLines(before, nftIn(t, node, "list", "ruleset")); diff != "" {
			t.Errorf("ruleset changed (-before +after):\n%s", diff)
		}
	})
	t.Run("cleanup removes both tables", func(t *testing.T) {
		for range 2 { // the second finds nothing to remove, and succeeds
			runOK(t, node, bin, "cleanup")
			if out := nftIn(t, node, "list", "tables"); out != "" {
				t.Errorf("tables left after cleanup: %q", out)
			}
		}
	})
}

// runOK runs bin inside ns and returns its stdout; it fails the test
// unless the command succeeds.
func runOK(t *testing.T, ns *lab.NS, bin string, args ...string) string {
	t.Helper()
	stdout, stderr, err := runIn(ns, bin, args...)
	if err != nil {
		t.Fatalf("nftproxy %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

// editedExamples copies the examples to a temporary directory and replaces
// old with new in one file, which must contain old.
func editedExamples(t *testing.T, examples, file, old, new string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "examples")
	if err := os.CopyFS(dir, os.DirFS(examples)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s: %v, or %q not in it", path, err, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

var appliedRE = regexp.MustCompile(`^applied (\d+) operations`)

// appliedOps is the number of operations an apply summary reports, or -1.
func appliedOps(summary string) int {
	m := appliedRE.FindStringSubmatch(summary)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// assertHolds reads ns's tables back over netlink and wants exactly what
// the manifests in dir compile to with the command's defaults.
func assertHolds(t *testing.T, ns *lab.NS, dir string) {
	t.Helper()
	res, err := manifest.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := compile.Ruleset(&res.Snapshot, res.Nodes[0], compile.DefaultOptions())
	k, err := kernel.Open(ns.FD(t))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	got, err := k.Read()
	if err != nil {
		t.Fatal(err)
	}
	if plan := nft.Diff(got, want); !plan.Empty() {
		t.Errorf("the kernel does not hold what the manifests compile to; the plan to get there:\n%s", plan.Text())
	}
}
