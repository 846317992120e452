//go:build integration

package agentfailure

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// The storm: stormRate EndpointSlice updates per second for stormDuration,
// spread over stormServices Services by stormWorkers writers.
const (
	stormServices = 50
	stormRate     = 1000
	stormDuration = 30 * time.Second
	stormWorkers  = 32
	// stormMinSync is the agent's minSyncPeriod during the storm.
	stormMinSync = time.Second
	// stormRSSGrowth is how much the agent's resident memory may grow over
	// the storm: its caches hold the same 50 objects throughout, so growth
	// proportional to the ~30,000 updates is a leak.
	stormRSSGrowth = 64 << 20
)

// syncCount is the agent's number of syncs: the sync histogram's count
// (every sync programs the IPv4 table of the lab's dual-stack node).
const syncCount = `kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"}`

// TestEndpointSliceStorm updates EndpointSlices through the API server as
// fast as stormRate allows for stormDuration while nftproxy runs with
// minSyncPeriod 1s: it syncs at most once per minSyncPeriod (its own sync
// counter), its memory does not grow with the number of updates, and when
// the storm is over every Service's chain holds exactly the endpoints its
// last update gave it.
func TestEndpointSliceStorm(t *testing.T) {
	env := e2e.New(t, 1)
	agent := startAgent(t, env, "--min-sync-period="+stormMinSync.String())
	storm := newStorm(t, env)
	e2e.Eventually(t, "every storm Service programmed", storm.programmed(env.Lab))

	pid := agent.Cmd.Process.Pid
	syncs0, rss0 := mustScrape(t, env, syncCount), mustRSS(t, pid)
	updates, elapsed := storm.run(t)
	syncs1 := mustScrape(t, env, syncCount)
	t.Logf("%d EndpointSlice updates in %v (%.0f/s, target %d/s); %v syncs meanwhile",
		updates, elapsed.Round(time.Millisecond), float64(updates)/elapsed.Seconds(), stormRate, syncs1-syncs0)
	if limit := float64(int(elapsed/stormMinSync) + 2); syncs1-syncs0 > limit {
		t.Errorf("%v syncs during %v with minSyncPeriod %v: more than %v", syncs1-syncs0, elapsed, stormMinSync, limit)
	}
	e2e.Eventually(t, "every chain holds its Service's last endpoints", storm.programmed(env.Lab))
	rss1 := mustRSS(t, pid)
	t.Logf("agent RSS %d MiB before the storm, %d MiB after", rss0>>20, rss1>>20)
	if rss1-rss0 > stormRSSGrowth {
		t.Errorf("agent RSS grew by %d MiB over the storm", (rss1-rss0)>>20)
	}
	if done, _ := agent.Exited(); done {
		t.Fatal(agent.Failure())
	}
}

// storm holds the storm's Services and the endpoints each was last given.
type storm struct {
	env  *e2e.Env
	mu   sync.Mutex
	want map[string][]netip.Addr // Service name -> endpoints
	// slices are the last written objects (carrying resourceVersion),
	// each touched by one writer only.
	slices []*discoveryv1.EndpointSlice
}

// stormPool are the endpoint addresses the storm picks from; nothing
// serves on them: the test reads the rules, it sends no traffic to them.
func stormPool() []netip.Addr {
	var out []netip.Addr
	for i := range 40 {
		out = append(out, netip.AddrFrom4([4]byte{10, 244, 200, byte(i + 1)}))
	}
	return out
}

func stormName(i int) string { return fmt.Sprintf("storm-%02d", i) }

func stormIP(i int) string { return fmt.Sprintf("10.96.9.%d", i+1) }

func newStorm(t *testing.T, env *e2e.Env) *storm {
	t.Helper()
	s := &storm{env: env, want: map[string][]netip.Addr{}}
	pool := stormPool()
	for i := range stormServices {
		name := stormName(i)
		env.Create(t, e2e.Service(name, stormIP(i), e2e.TCPPort("http", 80, 0)))
		eps := pool[i%len(pool) : i%len(pool)+1]
		created, err := env.Kube.DiscoveryV1().EndpointSlices(e2e.Namespace).Create(env.Ctx, e2e.Slice(name, "http", eps...), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.slices = append(s.slices, created)
		s.want[name] = eps
	}
	return s
}

// run lets stormWorkers writers update the slices, each at its share of
// stormRate, for stormDuration; it returns how many updates succeeded and
// how long it took. Writers that fall behind (a slow API server) do not
// catch up: the achieved rate is reported, not assumed.
func (s *storm) run(t *testing.T) (int64, time.Duration) {
	t.Helper()
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, stormWorkers)
	start := time.Now()
	interval := time.Second * stormWorkers / stormRate
	for w := range stormWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.write(w, start, interval, &done)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return done.Load(), time.Since(start)
}

// write is one writer: slices w, w+stormWorkers, ... in turn.
func (s *storm) write(w int, start time.Time, interval time.Duration, done *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(uint64(w), 1))
	pool := stormPool()
	c := s.env.Kube.DiscoveryV1().EndpointSlices(e2e.Namespace)
	for k := 0; ; k++ {
		next := start.Add(time.Duration(k) * interval)
		if next.Sub(start) >= stormDuration {
			return nil
		}
		time.Sleep(time.Until(next))
		i := w + (k%((stormServices-w+stormWorkers-1)/stormWorkers))*stormWorkers
		if i >= stormServices {
			continue
		}
		eps := pick(rng, pool)
		obj := e2e.Slice(stormName(i), "http", eps...)
		obj.ResourceVersion = s.slices[i].ResourceVersion
		updated, err := c.Update(s.env.Ctx, obj, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("writer %d: update %s: %w", w, obj.Name, err)
		}
		s.mu.Lock()
		s.slices[i], s.want[stormName(i)] = updated, eps
		s.mu.Unlock()
		done.Add(1)
	}
}

// pick returns 1 to 5 distinct addresses of pool.
func pick(rng *rand.Rand, pool []netip.Addr) []netip.Addr {
	perm := rng.Perm(len(pool))[:1+rng.IntN(5)]
	out := make([]netip.Addr, len(perm))
	for j, p := range perm {
		out[j] = pool[p]
	}
	return out
}

// programmed checks that every storm Service sends new connections to
// exactly its last endpoints.
func (s *storm) programmed(c *lab.Cluster) func() error {
	return func() error {
		p, err := e2e.ReadProgrammed(c)
		if err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := range stormServices {
			name := stormName(i)
			dests, err := p.Destinations(netip.MustParseAddr(stormIP(i)), 80)
			if err != nil {
				return err
			}
			if got, want := addrStrings(dests), addrStrings(s.want[name]); !slices.Equal(got, want) {
				return fmt.Errorf("%s: DNATs to %v, want %v", name, got, want)
			}
		}
		return nil
	}
}

func addrStrings(addrs []netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	slices.Sort(out)
	return out
}

func mustScrape(t *testing.T, env *e2e.Env, name string) float64 {
	t.Helper()
	var v float64
	e2e.Eventually(t, "scrape "+name, func() (err error) {
		v, err = scrape(env.Lab.Node, name)
		return err
	})
	return v
}

func mustRSS(t *testing.T, pid int) int64 {
	t.Helper()
	v, err := rss(pid)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
