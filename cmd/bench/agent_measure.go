package main

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nftproxy/nftproxy/nft"
)

// agentRun is what one run of one proxy measured at one cluster size.
// Times are in seconds, memory in bytes; JSON, so that `bench plot` can
// draw runs made apart.
type agentRun struct {
	Proxy string
	Size  string
	// Load is the load average (1, 5, 15 min) when the run started.
	Load string
	// Cold is the cold full sync: from the proxy's exec to the moment the
	// first and the last Service's entries (entrySet) are both in the
	// kernel; 0 when ColdTimeout passed first.
	Cold, ColdTimeout float64
	// StartCPU is the CPU the proxy (and its waited-for children) used
	// from its start until its syncs stopped (its sync count unchanged for
	// 3 s after the cold sync): read at the cold sync itself, it would miss
	// the kernel time of kube-proxy's last nft, not yet reaped.
	StartCPU float64
	// FirstSync is the proxy's own duration of its first sync, from
	// kubeproxy_sync_proxy_rules_duration_seconds (kube-proxy: its first
	// sync of each IP family, summed), 0 when unknown.
	FirstSync float64
	// Changes holds, by kind, each one-Service change's network
	// programming latency and sync duration, from the metrics.
	Changes map[string][]change `json:",omitempty"`
	Churn   *churnResult        `json:",omitempty"`
	// HWM is VmHWM just before the stop; MaxRSS ru_maxrss after the exit.
	HWM, MaxRSS int64
}

// change is one one-Service change: the increase of the network
// programming histogram's sum (one observation: this change's latency)
// and the mean duration of the syncs in between.
type change struct{ Programming, Sync float64 }

// The one-Service changes, in the order they are made: an endpoint's
// address replaced, an endpoint removed (the count goes down), the
// endpoint added back.
var changeKinds = []string{"replace", "remove", "add"}

// churnResult is a sustained churn of EndpointSlice updates.
type churnResult struct {
	Updates int     // written
	Writing float64 // seconds the writes took (Updates / rate when on time)
	Window  float64 // first write to the last update programmed (or the wait's end)
	CPU     float64 // the proxy's CPU in Window
	Syncs   float64
	// Programmed counts the latencies observed; P50, P99 are
	// histogram_quantile estimates, P50Le and P99Le the upper bounds of
	// their buckets, Mean is sum / count (exact).
	Programmed             float64
	P50, P99, P50Le, P99Le float64
	Mean                   float64
}

// agentConfig is the agent benchmark's flags.
type agentConfig struct {
	sizes        []size
	runs         int
	proxies      []proxyKind
	changes      int
	churnRate    int
	churnFor     time.Duration
	coldTimeout  time.Duration
	kpOnceAbove  int
	kpMax        int
	writers      int
	loadOnly     bool
	logs         string
	lock         string
	jsonOut, svg string
	bins         binaries
}

type binaries struct{ nftproxy, kubeProxy string }

// pollInterval is the resolution of the cold-sync time.
const pollInterval = 20 * time.Millisecond

// entrySet is where each proxy puts the entry of a ClusterIP Service port,
// keyed ClusterIP . protocol . port: kube-proxy's service-ips verdict map,
// our cluster-ip-ports set. The element appears in the same transaction as
// the Service's rules or endpoints.
func entrySet(kind proxyKind) *nft.Set {
	key := []nft.DataType{nft.TypeIPv4Addr, nft.TypeInetProto, nft.TypeInetService}
	if kind == kubeProxy {
		return &nft.Set{Name: "service-ips", Map: true, Key: key}
	}
	return &nft.Set{Name: "cluster-ip-ports", Key: key}
}

func serviceKey(i int) []nft.Value {
	return []nft.Value{{Addr: clusterIP(i)}, {Num: uint32(nft.ProtoTCP)}, {Num: 80}}
}

// measureProxy runs one proxy once on the API's cluster in a node of its
// own and measures it.
func measureProxy(a *api, c agentConfig, kind proxyKind, s size) (agentRun, error) {
	r := agentRun{Proxy: string(kind), Size: s.String(), ColdTimeout: c.coldTimeout.Seconds(), Load: loadAverage()}
	n, err := newNode(a.ns)
	if err != nil {
		return r, err
	}
	defer func() {
		if err := n.close(); err != nil {
			progress("warning: %v", err)
		}
	}()
	dir, err := os.MkdirTemp(c.logs, string(kind)+"-")
	if err != nil {
		return r, err
	}
	args, err := proxyArgs(kind, c.bins, a.srv.Kubeconfig, dir)
	if err != nil {
		return r, err
	}
	p, err := startProcess(n, args, filepath.Join(dir, "log"))
	if err != nil {
		return r, err
	}
	err = measureRunning(a, c, n, p, s, &r)
	if hwm, herr := p.hwm(); herr == nil {
		r.HWM = hwm
	}
	r.MaxRSS = p.stop()
	return r, err
}

func measureRunning(a *api, c agentConfig, n *node, p *process, s size, r *agentRun) error {
	if err := waitCold(n, p, entrySet(proxyKind(r.Proxy)), s, c.coldTimeout, r); err != nil || r.Cold == 0 {
		return err
	}
	sc := newScraper(n)
	first, err := waitQuiet(sc, p)
	if err != nil {
		return err
	}
	// kube-proxy runs a proxier per IP family: its first syncs are two.
	if h := first[metricSync]; h.count <= 2 {
		r.FirstSync = h.sum
	}
	cpu, err := p.cpu()
	if err != nil {
		return err
	}
	r.StartCPU = cpu.Seconds()
	if err := measureChanges(a, c, sc, p, s, r); err != nil {
		return err
	}
	if c.churnRate > 0 {
		ch, err := measureChurn(a, c, sc, p, s)
		r.Churn = ch
		return err
	}
	return nil
}

// waitCold polls the node's kernel until the first and the last Service
// are programmed, and records the time since the exec and the CPU used.
func waitCold(n *node, p *process, entries *nft.Set, s size, timeout time.Duration, r *agentRun) error {
	deadline := p.start.Add(timeout)
	for _, i := range []int{s.services - 1, 0} {
		for {
			_, ok, err := n.k.GetElement(nft.IPv4, entries, serviceKey(i))
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if err := p.alive(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				progress("%s: not programmed after %v: cold sync not measured", p.name, timeout)
				return nil
			}
			time.Sleep(pollInterval)
		}
	}
	r.Cold = time.Since(p.start).Seconds()
	return nil
}

// waitQuiet waits until the proxy has finished syncing: its sync count
// unchanged for 3 s (minSyncPeriod is 1 s). It returns the first scrape
// that answered.
func waitQuiet(sc *scraper, p *process) (scrape, error) {
	var first, last scrape
	since := time.Now()
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if err := p.alive(); err != nil {
			return nil, err
		}
		cur, err := sc.get()
		if err != nil {
			continue // the metrics server may not be up yet
		}
		if first == nil {
			first = cur
		}
		if last == nil || cur[metricSync].count != last[metricSync].count {
			last, since = cur, time.Now()
		}
		if cur[metricSync].count > 0 && time.Since(since) >= 3*time.Second {
			return first, nil
		}
	}
	return nil, errors.New("the proxy kept syncing for 5 minutes")
}

// changeService is the Service the one-Service changes are made to; the
// churn leaves it alone.
func changeService(s size) int { return s.services / 2 }

// measureChanges makes c.changes rounds of the changeKinds to one Service
// and records each one's programming latency and sync time.
func measureChanges(a *api, c agentConfig, sc *scraper, p *process, s size, r *agentRun) error {
	i := changeService(s)
	base := endpointAddrs(i, s.endpoints)
	for range c.changes {
		for _, kind := range changeKinds {
			addrs := append([]netip.Addr(nil), base...)
			switch kind {
			case "replace":
				addrs[0] = a.movedAddr()
			case "remove":
				addrs = addrs[1:]
			}
			ch, err := timeChange(a, sc, p, i, addrs)
			if err != nil {
				return fmt.Errorf("%s one endpoint: %w", kind, err)
			}
			if r.Changes == nil {
				r.Changes = map[string][]change{}
			}
			r.Changes[kind] = append(r.Changes[kind], ch)
			time.Sleep(1500 * time.Millisecond) // longer than minSyncPeriod: the next change finds the proxy idle
		}
	}
	return nil
}

// timeChange writes Service i's endpoints and waits until the proxy has
// observed its network programming latency.
func timeChange(a *api, sc *scraper, p *process, i int, addrs []netip.Addr) (change, error) {
	before, err := sc.get()
	if err != nil {
		return change{}, err
	}
	if err := a.setEndpoints(i, addrs); err != nil {
		return change{}, err
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
		if err := p.alive(); err != nil {
			return change{}, err
		}
		after, err := sc.get()
		if err != nil {
			return change{}, err
		}
		prog := after[metricProgramming].sub(before[metricProgramming])
		if prog.count == 0 {
			continue
		}
		syncs := after[metricSync].sub(before[metricSync])
		return change{Programming: prog.sum / prog.count, Sync: syncs.sum / math.Max(1, syncs.count)}, nil
	}
	return change{}, errors.New("not programmed after 2 minutes")
}

// measureChurn writes c.churnRate EndpointSlice updates a second for
// c.churnFor, each replacing one endpoint address of another Service,
// waits until every one is programmed (at most a minute after the last
// write), and reads what the proxy spent.
func measureChurn(a *api, c agentConfig, sc *scraper, p *process, s size) (*churnResult, error) {
	before, err := sc.get()
	if err != nil {
		return nil, err
	}
	cpu0, err := p.cpu()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	n, err := a.churn(c.churnRate, c.churnFor, s, changeService(s))
	res := &churnResult{Updates: n, Writing: time.Since(start).Seconds()}
	if err != nil {
		return res, err
	}
	after := before
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if after, err = sc.get(); err != nil {
			return res, err
		}
		if after[metricProgramming].count-before[metricProgramming].count >= float64(n) {
			break
		}
	}
	res.Window = time.Since(start).Seconds()
	cpu1, err := p.cpu()
	if err != nil {
		return res, err
	}
	res.CPU = (cpu1 - cpu0).Seconds()
	prog := after[metricProgramming].sub(before[metricProgramming])
	res.Syncs = after[metricSync].count - before[metricSync].count
	res.Programmed = prog.count
	res.P50, res.P50Le = prog.quantile(0.5)
	res.P99, res.P99Le = prog.quantile(0.99)
	if prog.count > 0 {
		res.Mean = prog.sum / prog.count
	}
	return res, nil
}

// churn writes rate updates a second for d, from a few writers so that a
// slow write does not hold back the next, and returns how many it wrote.
// Update m goes to Service (m*7919+1) mod the Service count, skipping
// skip: consecutive updates hit Services spread over the cluster.
func (a *api) churn(rate int, d time.Duration, s size, skip int) (int, error) {
	total := int(float64(rate) * d.Seconds())
	jobs := make(chan int, total)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 8 {
		wg.Go(func() {
			for m := range jobs {
				i := (m*7919 + 1) % s.services
				if i == skip {
					i = (i + 1) % s.services
				}
				addrs := endpointAddrs(i, s.endpoints)
				addrs[m%s.endpoints] = a.movedAddr()
				if err := a.setEndpoints(i, addrs); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
				}
			}
		})
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for m := range total {
		<-tick.C
		jobs <- m
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	return total, first
}
