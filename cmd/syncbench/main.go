// Command syncbench times the sync engine (proxy/dataplane) phase by phase
// on a synthetic cluster, in a network namespace it creates and removes:
//
//	syncbench [-services 10000] [-endpoints 10] [-runs 5] [-cpuprofile FILE] [-memprofile FILE]
//
// It prints the median of -runs for: a full compile, the first Sync into an
// empty namespace, a read of the tables back from the kernel, and a Sync
// after one endpoint of one Service changed (compile, diff and commit), and
// a periodic full resync (Input.Full) with nothing changed; and for the
// first Sync, the Read and the resync, the peak resident memory while each
// ran, the live heap after it, and the CPU time it took.
// It needs root; it never touches the host's own namespace.
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft/compile"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

func main() {
	services := flag.Int("services", 10000, "Services in the cluster")
	endpoints := flag.Int("endpoints", 10, "endpoints per Service")
	runs := flag.Int("runs", 5, "runs per figure; the median is printed")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the first run's first Sync and one-endpoint syncs to FILE")
	flag.StringVar(&memprofile, "memprofile", "", "write the first run's heap profile (allocs) after its first Sync to FILE, and after its Read to FILE.read")
	flag.Parse()
	if err := run(*services, *endpoints, *runs, *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "syncbench:", err)
		os.Exit(1)
	}
}

// figures are the timings of one run.
type figures struct {
	compile, first, read, one time.Duration
	firstOps, oneOps          int
	firstMem, readMem         memory
	resync                    time.Duration
	resyncMem                 memory
}

// memprofile is the -memprofile file; cleared once written.
var memprofile string

func run(services, endpoints, runs int, cpuprofile string) error {
	var all []figures
	for range runs {
		f, err := runOnce(services, endpoints, cpuprofile)
		if err != nil {
			return err
		}
		all = append(all, f)
		cpuprofile = "" // the first run's profile is enough
	}
	fmt.Printf("%d Services x %d endpoints, median of %d runs\n\n", services, endpoints, runs)
	fmt.Println("| phase | wall | ops |\n|---|---|---|")
	fmt.Printf("| compile (compile.Ruleset) | %v | |\n", median(all, func(f figures) time.Duration { return f.compile }))
	fmt.Printf("| first Sync, empty namespace | %v | %d |\n", median(all, func(f figures) time.Duration { return f.first }), all[0].firstOps)
	fmt.Printf("| kernel Read of the tables | %v | |\n", median(all, func(f figures) time.Duration { return f.read }))
	fmt.Printf("| Sync after one endpoint changed | %v | %d |\n", median(all, func(f figures) time.Duration { return f.one }), all[0].oneOps)
	fmt.Printf("| full resync, nothing changed | %v | |\n", median(all, func(f figures) time.Duration { return f.resync }))
	fmt.Println("\n| phase | peak RSS | live heap after | CPU user | CPU sys |\n|---|---|---|---|---|")
	printMemory("first Sync", all, func(f figures) memory { return f.firstMem })
	printMemory("kernel Read", all, func(f figures) memory { return f.readMem })
	printMemory("full resync", all, func(f figures) memory { return f.resyncMem })
	return nil
}

func median(all []figures, get func(figures) time.Duration) time.Duration {
	ds := make([]time.Duration, len(all))
	for i, f := range all {
		ds[i] = get(f)
	}
	slices.Sort(ds)
	return ds[len(ds)/2].Round(100 * time.Microsecond)
}

// printMemory prints the medians of one phase's memory figures.
func printMemory(phase string, all []figures, get func(figures) memory) {
	med := func(v func(memory) uint64) uint64 {
		xs := make([]uint64, len(all))
		for i, f := range all {
			xs[i] = v(get(f))
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	cpu := func(v func(memory) time.Duration) time.Duration {
		return median(all, func(f figures) time.Duration { return v(get(f)) })
	}
	fmt.Printf("| %s | %s | %s | %v | %v |\n", phase,
		mib(med(func(m memory) uint64 { return m.peakRSS })), mib(med(func(m memory) uint64 { return m.liveHeap })),
		cpu(func(m memory) time.Duration { return m.user }), cpu(func(m memory) time.Duration { return m.sys }))
}

func runOnce(services, endpoints int, cpuprofile string) (figures, error) {
	var f figures
	name := "syncbench-" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return f, fmt.Errorf("ip netns add: %v: %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", name).Run()
	fd, err := unix.Open("/run/netns/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, err
	}
	defer unix.Close(fd)
	k, err := kernel.Open(fd)
	if err != nil {
		return f, err
	}
	defer k.Close()
	return measure(k, services, endpoints, cpuprofile)
}

func measure(k *kernel.Kernel, services, endpoints int, cpuprofile string) (figures, error) {
	var f figures
	snap := synth.Plain(services, endpoints)
	in := dataplane.Input{Snapshot: snap, Node: node, Options: compile.DefaultOptions()}
	f.compile = timed(func() { compile.Ruleset(snap, in.Node, in.Options) })
	d := dataplane.New(k)
	var res dataplane.Result
	var err error
	if cpuprofile != "" {
		stop, err := profile(cpuprofile)
		if err != nil {
			return f, err
		}
		defer stop()
	}
	f.firstMem, err = measureMemory(func() (err error) {
		f.first = timed(func() { res, err = d.Sync(in) })
		return err
	})
	if err != nil {
		return f, fmt.Errorf("first sync: %w", err)
	}
	f.firstOps = res.Ops
	if memprofile != "" {
		if err := writeHeapProfile(memprofile); err != nil {
			return f, err
		}
	}
	f.readMem, err = measureMemory(func() (err error) {
		f.read = timed(func() { _, err = k.Read() })
		return err
	})
	if err != nil {
		return f, fmt.Errorf("read: %w", err)
	}
	if memprofile != "" {
		// Against the first: go tool pprof -base FILE FILE.read
		if err := writeHeapProfile(memprofile + ".read"); err != nil {
			return f, err
		}
		memprofile = ""
	}
	// One endpoint of one Service moves, several times; the last counts.
	for i := range 5 {
		svc := services / 2
		snap.Slices[svc].Endpoints[0].Addresses[0] = netip.AddrFrom4([4]byte{10, 250, byte(i), 1})
		in.Changed = map[string]bool{snap.Services[svc].Key(): true}
		if f.one = timed(func() { res, err = d.Sync(in) }); err != nil {
			return f, fmt.Errorf("one-endpoint sync: %w", err)
		}
		f.oneOps = res.Ops
	}
	in.Changed, in.Full = nil, true
	f.resyncMem, err = measureMemory(func() (err error) {
		f.resync = timed(func() { _, err = d.Sync(in) })
		return err
	})
	if err != nil {
		return f, fmt.Errorf("full resync: %w", err)
	}
	runtime.KeepAlive(d) // the live heap after each phase counts the Dataplane's state
	runtime.KeepAlive(snap)
	return f, nil
}

func profile(file string) (func(), error) {
	out, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); out.Close() }, nil
}

func timed(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}

var node = model.Node{Name: "node-1", IPs: []netip.Addr{netip.MustParseAddr("10.0.1.1")}}
