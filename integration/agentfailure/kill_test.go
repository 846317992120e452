//go:build integration

package agentfailure

import (
	"fmt"
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

// killDelays are when each agent is killed after it starts: spread over
// its start-up (informers listing, first compile, first commit).
var killDelays = []time.Duration{300 * time.Millisecond, 700 * time.Millisecond, 1200 * time.Millisecond, 2 * time.Second, 3 * time.Second}

// TestKillAgentDuringSync kills nftproxy with SIGKILL at several points of
// its first sync, each time starting from the same old ruleset: the kernel
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

	var states []nft.Ruleset
	for _, d := range killDelays {
		restore(t, k, old)
		agent := startAgent(t, env)
		time.Sleep(d)
		if err := agent.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("kill after %v: %v", d, err)
		}
		_ = agent.Wait(30 * time.Second)
		states = append(states, read(t, k))
	}
	last := startAgent(t, env)
	e2e.Eventually(t, "an agent left to run programs every Service", servicesProgrammed(env.Lab, killOld+killNew))
	converged := read(t, k)
	for i, st := range states {
		switch {
		case nft.Diff(st, old).Empty():
			t.Logf("killed after %v: the kernel held the old ruleset", killDelays[i])
		case nft.Diff(st, converged).Empty():
			t.Logf("killed after %v: the kernel held the new ruleset", killDelays[i])
		default:
			t.Errorf("killed after %v: the kernel held neither the old nor the new ruleset; from old:\n%s",
				killDelays[i], firstLines(nft.Diff(old, st).Text(), 20))
		}
	}
	if done, _ := last.Exited(); done {
		t.Fatal(last.Failure())
	}
}

// createServices creates Services kill-i for i in [from, to), each with one
// endpoint (nothing serves it: the test reads the rules).
func createServices(t *testing.T, env *e2e.Env, from, to int) {
	t.Helper()
	ep := env.Lab.Backends[0].IPv4
	for i := from; i < to; i++ {
		name := fmt.Sprintf("kill-%04d", i)
		env.Create(t, e2e.Service(name, fmt.Sprintf("10.96.%d.%d", 20+i/250, 1+i%250), e2e.TCPPort("http", 80, 0)))
		env.Create(t, e2e.Slice(name, "http", ep))
	}
}

// servicesProgrammed checks that service-ips holds n kill-* Services.
func servicesProgrammed(c *lab.Cluster, n int) func() error {
	return func() error {
		out, err := c.Node.Exec("nft", "list", "map", "ip", "kube-proxy", "service-ips")
		if err != nil {
			return err
		}
		if got := strings.Count(out, "goto service-"+e2e.Namespace+"/kill-"); got != n {
			return fmt.Errorf("%d kill-* Services in service-ips, want %d", got, n)
		}
		return nil
	}
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
