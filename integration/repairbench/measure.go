package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/compile"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// repairTimeout bounds the wait for one repair.
const repairTimeout = 60 * time.Second

// pollEvery is the resolution of the figures.
const pollEvery = time.Millisecond

// bench is the namespace, the Dataplane watching it, and a Kernel of its
// own for polling the generation.
type bench struct {
	ns      *lab.NS
	poll    *kernel.Kernel
	repairs <-chan dataplane.Repair
	desired nft.Ruleset
	k       *kernel.Kernel
}

func measure(t testing.TB, cfg config) {
	fmt.Printf("machine: %d CPUs, kernel %s, load average %s\n", runtime.NumCPU(), kernelRelease(), loadavg())
	b := setUp(t, cfg)
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			t.Fatalf("cpu profile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatalf("cpu profile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("\n| tampering | runs | command started -> repaired | tampering committed -> repaired | of which the repair | repair ops | read back | load average after |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|\n")
	for _, k := range kinds(b.desired) {
		if cfg.only != "" && !strings.Contains(k.name, cfg.only) {
			continue
		}
		b.measureKind(t, k, cfg)
	}
}

func setUp(t testing.TB, cfg config) *bench {
	ns := lab.NewNS(t, "repairbench")
	b := &bench{ns: ns}
	var err error
	if b.k, err = kernel.Open(ns.FD(t)); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = b.k.Close() })
	if b.poll, err = kernel.Open(ns.FD(t)); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = b.poll.Close() })
	snap := synth.Cluster(synth.Spec{Services: cfg.services, Endpoints: cfg.endpoints, Mixed: true})
	// The ServiceCIDR every cluster has, covering the synthetic ClusterIPs.
	snap.ServiceCIDRs = []model.ServiceCIDR{{Name: "kubernetes", CIDRs: []netip.Prefix{netip.PrefixFrom(synth.ClusterIPBase, 12)}}}
	node := model.Node{Name: synth.NodeName, IPs: []netip.Addr{netip.MustParseAddr("10.0.1.1")}}
	opts := compile.DefaultOptions()
	opts.LocalCIDRs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	d := dataplane.New(b.k)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b.repairs = d.Watch(ctx)
	start := time.Now()
	res, err := d.Sync(dataplane.Input{Snapshot: snap, Node: node, Options: opts})
	if err != nil {
		t.Fatalf("first sync: %v", err)
	}
	b.desired, _ = compile.Ruleset(snap, node, opts)
	fmt.Printf("cluster: %d Services x %d endpoints (mix), %s; first sync %v, %d ops\n",
		cfg.services, cfg.endpoints, size(b.desired), time.Since(start).Round(time.Millisecond), res.Ops)
	return b
}

// run is one tampering, timed.
type run struct {
	fromCommand, fromCommit time.Duration
	repair                  dataplane.Repair
}

func (b *bench) measureKind(t testing.TB, k kind, cfg config) {
	var runs []run
	for i := range cfg.runs {
		time.Sleep(cfg.pause)
		runs = append(runs, b.tamper(t, k, i))
	}
	b.check(t, k)
	if !k.repairs {
		fmt.Printf("| %s | %d | no repair | no repair | - | - | - | %s |\n", k.name, len(runs), loadavg())
		return
	}
	from := func(f func(run) time.Duration) string {
		var d []time.Duration
		for _, r := range runs {
			d = append(d, f(r))
		}
		return spread(d)
	}
	ops, readBack := runs[0].repair.Ops, false
	for _, r := range runs {
		readBack = readBack || r.repair.ReadBack
	}
	fmt.Printf("| %s | %d | %s | %s | %s | %d | %v | %s |\n", k.name, len(runs),
		from(func(r run) time.Duration { return r.fromCommand }), from(func(r run) time.Duration { return r.fromCommit }),
		from(func(r run) time.Duration { return r.repair.Elapsed }), ops, readBack, loadavg())
}

// tamper runs kind k's command for run i and waits for the repair: two
// transactions after the generation it started from, the tampering's and
// the repair's.
func (b *bench) tamper(t testing.TB, k kind, i int) run {
	base := b.generation(t)
	tampered, repaired := nft.NextGeneration(base), nft.NextGeneration(nft.NextGeneration(base))
	done := make(chan [2]time.Time, 1)
	stop := make(chan struct{})
	defer close(stop)
	go b.pollFor(tampered, repaired, k.repairs, stop, done)
	start := time.Now()
	cmd := exec.Command("nsenter", append([]string{"--net=" + b.ns.Path(), "nft"}, k.command(i)...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: nft %s: %v: %s", k.name, strings.Join(k.command(i), " "), err, out)
	}
	var r run
	if !k.repairs {
		select {
		case rep := <-b.repairs:
			t.Fatalf("%s: a repair (%+v), want none", k.name, rep)
		case <-time.After(500 * time.Millisecond):
		}
		return r
	}
	select {
	case at := <-done:
		r.fromCommand, r.fromCommit = at[1].Sub(start), at[1].Sub(at[0])
	case <-time.After(repairTimeout):
		t.Fatalf("%s: not repaired within %v", k.name, repairTimeout)
	}
	r.repair = <-b.repairs
	if r.repair.Err != nil || r.repair.Ops == 0 {
		t.Fatalf("%s: repair %+v", k.name, r.repair)
	}
	return r
}

// pollFor reads the generation every pollEvery and reports when it
// reached tampered and repaired.
func (b *bench) pollFor(tampered, repaired uint32, repairs bool, stop <-chan struct{}, done chan<- [2]time.Time) {
	var at [2]time.Time
	for {
		select {
		case <-stop:
			return
		default:
		}
		gen, err := b.poll.Generation()
		now := time.Now()
		if err == nil && gen == tampered && at[0].IsZero() {
			at[0] = now
		}
		if err == nil && gen == repaired && repairs {
			if at[0].IsZero() {
				at[0] = now // both between two polls
			}
			at[1] = now
			done <- at
			return
		}
		time.Sleep(pollEvery)
	}
}

func (b *bench) generation(t testing.TB) uint32 {
	gen, err := b.poll.Generation()
	if err != nil {
		t.Fatalf("generation: %v", err)
	}
	return gen
}

// check reads our tables back and compares them with the desired ones.
func (b *bench) check(t testing.TB, k kind) {
	for attempt := 0; ; attempt++ {
		before := b.generation(t)
		read, err := b.k.Read()
		if err != nil {
			t.Fatalf("%s: read back: %v", k.name, err)
		}
		p := nft.Diff(read, b.desired)
		if p.Empty() {
			return
		}
		after := b.generation(t)
		if attempt == 1 {
			t.Fatalf("%s: the kernel differs from the desired tables after the repairs (generation %d, %d):\n%s", k.name, before, after, p.Text())
		}
		// A dump of a large set right after a bulk insert may miss
		// elements while the kernel grows the set's hash table in the
		// background (rhashtable walks are not stable across a resize);
		// a second read a moment later sees them all.
		fmt.Printf("%s: read back at generation %d-%d differs (%s), reading again\n", k.name, before, after, p.Stats())
		time.Sleep(time.Second)
	}
}

func spread(d []time.Duration) string {
	s := slices.Clone(d)
	slices.Sort(s)
	r := func(x time.Duration) time.Duration { return x.Round(100 * time.Microsecond) }
	return fmt.Sprintf("%v (%v-%v)", r(s[len(s)/2]), r(s[0]), r(s[len(s)-1]))
}

func size(rs nft.Ruleset) string {
	var chains, rules, elements int
	for _, t := range rs {
		chains += len(t.Chains)
		for _, c := range t.Chains {
			rules += len(c.Rules)
		}
		for _, s := range t.Sets {
			elements += len(s.Elements)
		}
	}
	return fmt.Sprintf("%d chains, %d rules, %d elements", chains, rules, elements)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
