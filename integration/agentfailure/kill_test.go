//go:build integration

package agentfailure

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
)

// The agent kill test: the kernel holds killOld Services programmed by a
// first agent; killNew more are created while no agent runs, and the
// agents started next are killed during their first sync.
const (
	killOld = 300
	killNew = 1700
)

// Kill delays after an agent starts: coarseKills spread over
// coarseSpan find where the outcome flips from the old ruleset to the new
// one (the first commit), then fineKills bisect that interval, so that
// kills land while the agent commits.
const (
	coarseKills = 6
	coarseSpan  = 1500 * time.Millisecond
	fineKills   = 6
)

// TestKillAgentDuringSync kills nftproxy with SIGKILL at points around its
// first commit, each time starting from the same old ruleset: the kernel
// must hold exactly the old or exactly the new ruleset afterwards, never a
// mix, and an agent left to run converges on the new one.
func TestKillAgentDuringSync(t *testing.T) {
	env := e2e.New(t, 1)
	createServices(t, env, 0, killOld)
	first := startAgent(t, env)
	e2e.Eventually(t, "the first agent programs the old Services", servicesProgrammed(env.Lab, killOld))
	if err := first.Stop(); err != nil {
		t.Fatalf("first agent: %v", err)
	}
	k, err := kernel.Open(env.Lab.Node.FD(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	old := read(t, k)
	createServices(t, env, killOld, killOld+killNew)

	type outcome struct {
		delay time.Duration
		state nft.Ruleset
	}
	var outcomes []outcome
	kill := func(d time.Duration) bool {
		restore(t, k, old)
		agent := startUnwatched(t, env)
		time.Sleep(d)
		_ = agent.Cmd.Process.Signal(syscall.SIGKILL)
		_ = agent.Wait(30 * time.Second)
		st := read(t, k)
		outcomes = append(outcomes, outcome{d, st})
		return nft.Diff(st, old).Empty()
	}
	lo, hi := time.Duration(0), coarseSpan
	for i := range coarseKills {
		d := coarseSpan * time.Duration(i) / time.Duration(coarseKills-1)
		if kill(d) {
			lo = max(lo, d)
		} else {
			hi = min(hi, d)
		}
	}
	for range fineKills {
		if mid := (lo + hi) / 2; kill(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	last := startAgent(t, env)
	e2e.Eventually(t, "an agent left to run programs every Service", servicesProgrammed(env.Lab, killOld+killNew))
	converged := read(t, k)
	counts := map[string]int{}
	for _, o := range outcomes {
		switch {
		case nft.Diff(o.state, old).Empty():
			counts["old"]++
			t.Logf("killed after %v: the kernel held the old ruleset", o.delay)
		case nft.Diff(o.state, converged).Empty():
			counts["new"]++
			t.Logf("killed after %v: the kernel held the new ruleset", o.delay)
		default:
			t.Errorf("killed after %v: the kernel held neither the old nor the new ruleset; from old (%+v):\n%s\nto new (%+v):\n%s",
				o.delay, nft.Diff(old, o.state).Stats(), firstLines(nft.Diff(old, o.state).Text(), 10),
				nft.Diff(o.state, converged).Stats(), firstLines(nft.Diff(o.state, converged).Text(), 30))
		}
	}
	t.Logf("%d kills: %v; the outcome flips between %v and %v after start", len(outcomes), counts, lo, hi)
	if done, _ := last.Exited(); done {
		t.Fatal(last.Failure())
	}
}

// startUnwatched starts an agent like e2e's StartProxy, but without its
// report of an unexpected exit: these agents are meant to be killed.
func startUnwatched(t *testing.T, env *e2e.Env) *lab.Process {
	t.Helper()
	args := append([]string{lab.Nftproxy(t)}, env.ProxyArgs()...)
	return env.Lab.Node.StartLogged(t, "nftproxy (to be killed)", filepath.Join(t.TempDir(), "nftproxy.log"), args...)
}

// createServices creates Services kill-i for i in [from, to), each with one
// endpoint (nothing serves it: the test reads the rules).
func createServices(t *testing.T, env *e2e.Env, from, to int) {
	t.Helper()
	ep := env.Lab.Backends[0].IPv4
	for i := from; i < to; i++ {
		name := fmt.Sprintf("kill-%04d", i)
		env.Create(t, e2e.Service(name, killIP(i).String(), e2e.TCPPort("http", 80, 0)))
		env.Create(t, e2e.Slice(name, "http", ep))
	}
}

// servicesProgrammed checks that n kill-* Services (the first n) send new
// connections to their endpoint, and that no other does.
func servicesProgrammed(c *lab.Cluster, n int) func() error {
	return func() error {
		p, err := e2e.ReadProgrammed(c)
		if err != nil {
			return err
		}
		got := 0
		for i := range killOld + killNew {
			dests, err := p.Destinations(killIP(i), 80)
			if err != nil {
				return err
			}
			if len(dests) > 0 {
				got++
			}
		}
		if got != n {
			return fmt.Errorf("%d kill-* Services programmed, want %d", got, n)
		}
		return nil
	}
}

// killIP is the ClusterIP of the i-th kill-* Service.
func killIP(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 96, byte(20 + i/250), byte(1 + i%250)})
}

func read(t *testing.T, k *kernel.Kernel) nft.Ruleset {
	t.Helper()
	rs, err := k.Read()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// restore puts the old ruleset back in one transaction.
func restore(t *testing.T, k *kernel.Kernel, old nft.Ruleset) {
	t.Helper()
	if err := k.Apply(nft.Diff(read(t, k), old)); err != nil {
		t.Fatalf("restore the old ruleset: %v", err)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
