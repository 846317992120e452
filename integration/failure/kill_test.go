//go:build integration

package failure

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
)

// The clusters of the kill test: the kernel holds "before" when
// `nftproxy apply` of "after" is killed. After adds thousands of Services to
// before, so that its transaction is large and takes a while to commit.
var (
	killBefore = cluster{services: 500, endpoints: 5}
	killAfter  = cluster{services: 4000, endpoints: 5}
)

// Kill delays: coarseTrials spread over twice an uninterrupted apply find
// the last delay that left "before" and the first that left "after"; the
// commit happens between them, so fineTrials more bisect that interval,
// each landing where the outcome flips: while the process commits.
const (
	coarseTrials = 6
	fineTrials   = 8
)

type cluster struct{ services, endpoints int }

// manifests writes the cluster with cmd/gencluster and returns the file.
func (c cluster) manifests(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("cluster-%d.yaml", c.services))
	cmd := exec.Command("go", "run", "../../cmd/gencluster", "-services", strconv.Itoa(c.services),
		"-endpoints", strconv.Itoa(c.endpoints), "-o", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gencluster: %v: %s", err, out)
	}
	return path
}

// TestKillDuringApply kills `nftproxy apply` with SIGKILL at delays spread
// over a whole apply and then around its commit, each time in a namespace
// that held the "before" tables, and checks that the kernel then holds
// exactly the "before" or exactly the "after" tables, never something in
// between; and that running apply again converges on "after".
func TestKillDuringApply(t *testing.T) {
	bin := lab.Nftproxy(t)
	before, after := killBefore.manifests(t), killAfter.manifests(t)
	refBefore := reference(t, bin, before)
	refAfter := reference(t, bin, after)
	full := timeApply(t, bin, before, after)
	t.Logf("an uninterrupted apply of %d Services over %d takes %v", killAfter.services, killBefore.services, full)

	counts := map[string]int{}
	trial := func(delay time.Duration) string {
		ns := lab.NewNS(t, "kill")
		ns.MustExec(t, bin, "apply", "-f", before)
		exited := killApply(t, ns, bin, after, delay)
		state := classify(t, ns, refBefore, refAfter)
		counts[state]++
		t.Logf("kill after %v (had exited by itself: %v): kernel holds %s", delay.Round(time.Millisecond), exited, state)
		if state == mixed {
			t.Fatalf("kill -9 after %v left a ruleset that is neither before nor after", delay)
		}
		if state == stateBefore && counts[stateBefore] == 1 {
			// Once is enough to show that the next run converges.
			ns.MustExec(t, bin, "apply", "-f", after)
			if got := classify(t, ns, refBefore, refAfter); got != stateAfter {
				t.Fatalf("apply after the kill: kernel holds %s, want after", got)
			}
		}
		return state
	}
	lo, hi := time.Duration(0), 2*full
	for i := range coarseTrials {
		delay := 2 * full * time.Duration(i) / time.Duration(coarseTrials-1)
		if trial(delay) == stateBefore {
			lo = max(lo, delay)
		} else {
			hi = min(hi, delay)
		}
	}
	for range fineTrials {
		mid := (lo + hi) / 2
		if trial(mid) == stateBefore {
			lo = mid
		} else {
			hi = mid
		}
	}
	t.Logf("outcomes over %d kills: %v (the outcome flips between kills after %v and %v)", coarseTrials+fineTrials, counts, lo.Round(time.Millisecond), hi.Round(time.Millisecond))
}

const (
	stateBefore = "before"
	stateAfter  = "after"
	mixed       = "a mix"
)

// reference applies manifests into a fresh namespace and reads the tables
// back: what the kernel holds after an uninterrupted apply.
func reference(t *testing.T, bin, manifests string) nft.Ruleset {
	t.Helper()
	ns := lab.NewNS(t, "ref")
	ns.MustExec(t, bin, "apply", "-f", manifests)
	rs, err := openKernel(t, ns).Read()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// timeApply measures one uninterrupted apply of after over before.
func timeApply(t *testing.T, bin, before, after string) time.Duration {
	t.Helper()
	ns := lab.NewNS(t, "time")
	ns.MustExec(t, bin, "apply", "-f", before)
	start := time.Now()
	out := ns.MustExec(t, bin, "apply", "-f", after)
	d := time.Since(start)
	t.Logf("uninterrupted apply: %s", out)
	return d
}

// killApply starts `nftproxy apply -f manifests` in ns, sends SIGKILL after
// delay and waits for it; it reports whether the process had already
// exited by itself.
func killApply(t *testing.T, ns *lab.NS, bin, manifests string, delay time.Duration) bool {
	t.Helper()
	// "ip netns exec" execs the program: the pid is nftproxy's.
	cmd := exec.Command("ip", "netns", "exec", ns.Name, bin, "apply", "-f", manifests)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(delay)
	err := cmd.Process.Signal(syscall.SIGKILL)
	exited := err != nil // os: process already finished
	_ = cmd.Wait()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !st.Signaled() {
		exited = true
	}
	return exited
}

// classify reads ns's tables and says which reference they are.
func classify(t *testing.T, ns *lab.NS, before, after nft.Ruleset) string {
	t.Helper()
	got, err := openKernel(t, ns).Read()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case nft.Diff(got, before).Empty():
		return stateBefore
	case nft.Diff(got, after).Empty():
		return stateAfter
	}
	dumpRuleset(t, ns)
	return mixed
}

// dumpRuleset saves ns's ruleset in a file for the failure report.
func dumpRuleset(t *testing.T, ns *lab.NS) {
	t.Helper()
	out, _ := ns.Exec("nft", "list", "ruleset")
	f := filepath.Join(os.TempDir(), ns.Name+".nft")
	if err := os.WriteFile(f, []byte(out), 0o644); err == nil {
		t.Logf("ruleset saved in %s", f)
	}
}
