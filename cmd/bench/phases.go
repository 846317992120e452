package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// runPhases is `bench phases`: the sync engine (proxy/dataplane) timed
// phase by phase on a synthetic cluster, in a network namespace it creates
// and removes. It prints the median of -runs for: a full compile, the
// first Sync into an empty namespace, a read of the tables back from the
// kernel, a Sync after one endpoint of one Service changed (compile, diff
// and commit), and a periodic full resync (Input.Full) with nothing
// changed; and for the first Sync, the Read and the resync, the peak
// resident memory while each ran, the live heap after it, and the CPU time
// it took. Unlike bench sync, every phase runs in this one process, so
// that the profiles show them side by side.
func runPhases(args []string) error {
	fs := flag.NewFlagSet("phases", flag.ContinueOnError)
	services := fs.Int("services", 10000, "Services in the cluster")
	endpoints := fs.Int("endpoints", 10, "endpoints per Service")
	runs := fs.Int("runs", 5, "runs per figure; the median is printed")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the first run's first Sync and one-endpoint syncs to FILE")
	fs.StringVar(&phasesMemprofile, "memprofile", "", "write the first run's heap profile (allocs) after its first Sync to FILE, and after its Read to FILE.read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := requireRoot(); err != nil {
		return err
	}
	return phasesRuns(*services, *endpoints, *runs, *cpuprofile)
}

// phaseFigures are the timings of one run of bench phases.
type phaseFigures struct {
	compile, first, read, one time.Duration
	firstOps, oneOps          int
	firstMem, readMem         phaseMemory
	resync                    time.Duration
	resyncMem                 phaseMemory
}

// phasesMemprofile is the -phasesMemprofile file; cleared once written.
var phasesMemprofile string

func phasesRuns(services, endpoints, runs int, cpuprofile string) error {
	var all []phaseFigures
	for range runs {
		f, err := phasesOnce(services, endpoints, cpuprofile)
		if err != nil {
			return err
		}
		all = append(all, f)
		cpuprofile = "" // the first run's profile is enough
	}
	fmt.Printf("%d Services x %d endpoints, median of %d runs\n\n", services, endpoints, runs)
	fmt.Println("| phase | wall | ops |\n|---|---|---|")
	fmt.Printf("| compile (compile.Ruleset) | %v | |\n", phaseMedian(all, func(f phaseFigures) time.Duration { return f.compile }))
	fmt.Printf("| first Sync, empty namespace | %v | %d |\n", phaseMedian(all, func(f phaseFigures) time.Duration { return f.first }), all[0].firstOps)
	fmt.Printf("| kernel Read of the tables | %v | |\n", phaseMedian(all, func(f phaseFigures) time.Duration { return f.read }))
	fmt.Printf("| Sync after one endpoint changed | %v | %d |\n", phaseMedian(all, func(f phaseFigures) time.Duration { return f.one }), all[0].oneOps)
	fmt.Printf("| full resync, nothing changed | %v | |\n", phaseMedian(all, func(f phaseFigures) time.Duration { return f.resync }))
	fmt.Println("\n| phase | peak RSS | live heap after | CPU user | CPU sys |\n|---|---|---|---|---|")
	printPhaseMemory("first Sync", all, func(f phaseFigures) phaseMemory { return f.firstMem })
	printPhaseMemory("kernel Read", all, func(f phaseFigures) phaseMemory { return f.readMem })
	printPhaseMemory("full resync", all, func(f phaseFigures) phaseMemory { return f.resyncMem })
	return nil
}

func phaseMedian(all []phaseFigures, get func(phaseFigures) time.Duration) time.Duration {
	ds := make([]time.Duration, len(all))
	for i, f := range all {
		ds[i] = get(f)
	}
	slices.Sort(ds)
	return ds[len(ds)/2].Round(100 * time.Microsecond)
}

// printPhaseMemory prints the medians of one phase's memory figures.
func printPhaseMemory(phase string, all []phaseFigures, get func(phaseFigures) phaseMemory) {
	med := func(v func(phaseMemory) uint64) uint64 {
		xs := make([]uint64, len(all))
		for i, f := range all {
			xs[i] = v(get(f))
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	cpu := func(v func(phaseMemory) time.Duration) time.Duration {
		return phaseMedian(all, func(f phaseFigures) time.Duration { return v(get(f)) })
	}
	fmt.Printf("| %s | %s | %s | %v | %v |\n", phase,
		mibs(med(func(m phaseMemory) uint64 { return m.peakRSS })), mibs(med(func(m phaseMemory) uint64 { return m.liveHeap })),
		cpu(func(m phaseMemory) time.Duration { return m.user }), cpu(func(m phaseMemory) time.Duration { return m.sys }))
}

// phasesOnce measures one run in a network namespace of its own.
func phasesOnce(services, endpoints int, cpuprofile string) (phaseFigures, error) {
	ns, err := newNetns("phases")
	if err != nil {
		return phaseFigures{}, err
	}
	defer ns.remove()
	k, err := ns.kernel()
	if err != nil {
		return phaseFigures{}, err
	}
	defer k.Close()
	return measurePhases(k, services, endpoints, cpuprofile)
}

func measurePhases(k *kernel.Kernel, services, endpoints int, cpuprofile string) (phaseFigures, error) {
	var f phaseFigures
	snap := synth.Plain(services, endpoints)
	in := dataplane.Input{Snapshot: snap, Node: phasesNode, Options: compile.DefaultOptions()}
	f.compile = phaseTime(func() { compile.Ruleset(snap, in.Node, in.Options) })
	d := dataplane.New(k)
	var res dataplane.Result
	var err error
	if cpuprofile != "" {
		stop, err := cpuProfile(cpuprofile)
		if err != nil {
			return f, err
		}
		defer stop()
	}
	f.firstMem, err = measurePhaseMemory(func() (err error) {
		f.first = phaseTime(func() { res, err = d.Sync(in) })
		return err
	})
	if err != nil {
		return f, fmt.Errorf("first sync: %w", err)
	}
	f.firstOps = res.Ops
	if phasesMemprofile != "" {
		if err := writeHeapProfile(phasesMemprofile); err != nil {
			return f, err
		}
	}
	f.readMem, err = measurePhaseMemory(func() (err error) {
		f.read = phaseTime(func() { _, err = k.Read() })
		return err
	})
	if err != nil {
		return f, fmt.Errorf("read: %w", err)
	}
	if phasesMemprofile != "" {
		// Against the first: go tool pprof -base FILE FILE.read
		if err := writeHeapProfile(phasesMemprofile + ".read"); err != nil {
			return f, err
		}
		phasesMemprofile = ""
	}
	// One endpoint of one Service moves, several times; the last counts.
	for i := range 5 {
		svc := services / 2
		snap.Slices[svc].Endpoints[0].Addresses[0] = netip.AddrFrom4([4]byte{10, 250, byte(i), 1})
		in.Changed = map[string]bool{snap.Services[svc].Key(): true}
		if f.one = phaseTime(func() { res, err = d.Sync(in) }); err != nil {
			return f, fmt.Errorf("one-endpoint sync: %w", err)
		}
		f.oneOps = res.Ops
	}
	in.Changed, in.Full = nil, true
	f.resyncMem, err = measurePhaseMemory(func() (err error) {
		f.resync = phaseTime(func() { _, err = d.Sync(in) })
		return err
	})
	if err != nil {
		return f, fmt.Errorf("full resync: %w", err)
	}
	runtime.KeepAlive(d) // the live heap after each phase counts the Dataplane's state
	runtime.KeepAlive(snap)
	return f, nil
}

func cpuProfile(file string) (func(), error) {
	out, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); out.Close() }, nil
}

func phaseTime(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}

var phasesNode = model.Node{Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("10.0.1.1")}}
