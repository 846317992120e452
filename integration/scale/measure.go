package main

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// parallel is how many API writes are in flight while loading objects.
const parallel = 16

// nodes is the cluster size the endpoints are spread over, as in a real
// cluster: this node (node-1, e2e.NodeName) hosts one in nodes endpoints.
const nodes = 100

// firstEndpoint is the first endpoint address; addresses count up from it.
var firstEndpoint = netip.MustParseAddr("10.240.0.1")

// measure loads the objects, starts nftproxy and prints the figures.
func measure(t testing.TB, cfg config) {
	env := e2e.New(t, 0)
	fmt.Printf("loading %d Services x %d endpoints through the API server ...\n", cfg.services, cfg.endpoints)
	start := time.Now()
	load(t, env, cfg)
	fmt.Printf("loaded in %v\n", time.Since(start).Round(time.Millisecond))

	k := openKernel(t, env)
	start = time.Now()
	proxy := env.StartProxy(t)
	last := cfg.services - 1
	waitFor(t, k, chainOf(last), endpointIP(last, 0))
	fmt.Printf("nftproxy start to all %d Services in the kernel: %v\n", cfg.services, time.Since(start).Round(time.Millisecond))
	time.Sleep(cfg.pause) // let the first sync's garbage go before reading memory
	rss, hwm := memory(t, proxy.Cmd.Process.Pid)
	fmt.Printf("nftproxy memory: VmRSS %s, VmHWM (peak) %s\n", mib(rss), mib(hwm))

	latencies := timeUpdates(t, env, k, cfg)
	fmt.Printf("network programming latency over %d runs: median %s (min %s, max %s)\n",
		len(latencies), ms(median(latencies)), ms(slices.Min(latencies)), ms(slices.Max(latencies)))
	rss, hwm = memory(t, proxy.Cmd.Process.Pid)
	fmt.Printf("nftproxy memory after the updates: VmRSS %s, VmHWM (peak) %s\n", mib(rss), mib(hwm))
}

// load creates the Services and their EndpointSlices, parallel writes at
// a time.
func load(t testing.TB, env *e2e.Env, cfg config) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, parallel)
	for range parallel {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < cfg.services; i = int(next.Add(1) - 1) {
				if err := createService(env, i, cfg.endpoints); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("load: %v", err)
	}
}

func createService(env *e2e.Env, i, endpoints int) error {
	svc := e2e.Service(name(i), clusterIP(i).String(), e2e.TCPPort("http", 80, 0))
	if _, err := env.Kube.CoreV1().Services(e2e.Namespace).Create(env.Ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %d: %w", i, err)
	}
	if _, err := env.Kube.DiscoveryV1().EndpointSlices(e2e.Namespace).Create(env.Ctx, slice(i, endpoints, 0), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create endpointslice %d: %w", i, err)
	}
	return nil
}

// slice is Service i's EndpointSlice with n endpoints, the first of them
// from generation gen (0 at load; each timed update moves it on).
func slice(i, n, gen int) *discoveryv1.EndpointSlice {
	addrs := make([]netip.Addr, n)
	for j := range n {
		addrs[j] = endpointIP(i, j)
	}
	if gen > 0 {
		addrs[0] = updatedIP(gen)
	}
	s := e2e.Slice(name(i), "http", addrs...)
	for j := range s.Endpoints {
		node := fmt.Sprintf("node-%d", (i*n+j)%nodes+1)
		s.Endpoints[j].NodeName = &node
	}
	return s
}

func name(i int) string { return "svc-" + strconv.Itoa(i) }

// clusterIP i counts up from 10.96.16.0, clear of the API server's own
// "kubernetes" Service at the start of the range.
func clusterIP(i int) netip.Addr { return nth(netip.MustParseAddr("10.96.16.0"), i) }

// endpointIP is Service i's endpoint j, unique across Services.
func endpointIP(i, j int) netip.Addr { return nth(firstEndpoint, i*64+j) }

// updatedIP is the address a timed update gen brings, used by no Service
// before it.
func updatedIP(gen int) netip.Addr { return nth(netip.MustParseAddr("10.250.0.0"), gen) }

func nth(a netip.Addr, n int) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// timeUpdates updates the EndpointSlice of Services spread over the range,
// one at a time, and times each until its new endpoint is in the kernel.
func timeUpdates(t testing.TB, env *e2e.Env, k *kernel, cfg config) []time.Duration {
	var out []time.Duration
	for run := 1; run <= cfg.runs; run++ {
		time.Sleep(cfg.pause)
		i := (run * 7919) % cfg.services // spread over the Services
		s := slice(i, cfg.endpoints, run)
		start := time.Now()
		env.Update(t, s)
		waitFor(t, k, chainOf(i), updatedIP(run))
		out = append(out, time.Since(start))
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// memory reads VmRSS and VmHWM of pid, in KiB.
func memory(t testing.TB, pid int) (rss, hwm int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read nftproxy status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss, _ = strconv.Atoi(f[1])
		case "VmHWM:":
			hwm, _ = strconv.Atoi(f[1])
		}
	}
	return rss, hwm
}

func mib(kib int) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func ms(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
