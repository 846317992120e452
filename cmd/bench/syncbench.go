package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// syncConfig is the sync benchmark's flags.
type syncConfig struct {
	sizes     []size
	runs      int
	baseline  bool
	kpTimeout time.Duration
	kpMax     int
	kpOnce    int
	memLimit  string
	memMax    int
}

func parseSyncFlags(args []string) (syncConfig, error) {
	fs := flag.NewFlagSet("sync", flag.ContinueOnError)
	sizes := fs.String("sizes", "1000x10,10000x10,50000x5", "clusters to measure, SERVICESxENDPOINTS, comma-separated")
	runs := fs.Int("runs", 3, "runs per figure (the median is printed)")
	baseline := fs.Bool("baseline", true, "also load kube-proxy's shape with nft -f")
	kpTimeout := fs.Duration("baseline-timeout", 5*time.Minute, "give up on one kube-proxy-shape load after this long")
	kpMax := fs.Int("baseline-max-services", 10000, "skip kube-proxy's shape above this many Services (the load grows with the square of the Services)")
	kpOnce := fs.Int("baseline-once-above", 5000, "load kube-proxy's shape once only, not -runs times, above this many Services: it takes minutes")
	memLimit := fs.String("memlimit", "150MiB", "also run each size with this GOMEMLIMIT (Go's soft memory limit, which an operator may set); \"\" to skip")
	memMax := fs.Int("memlimit-max-services", 10000, "skip the -memlimit runs above this many Services: when the live heap exceeds the limit, the collector runs nearly all the time")
	if err := fs.Parse(args); err != nil {
		return syncConfig{}, err
	}
	c := syncConfig{runs: *runs, baseline: *baseline, kpTimeout: *kpTimeout, kpMax: *kpMax, kpOnce: *kpOnce,
		memLimit: *memLimit, memMax: *memMax}
	var err error
	c.sizes, err = parseSizes(*sizes)
	if c.runs < 1 {
		err = errors.New("-runs must be at least 1")
	}
	return c, err
}

// sizeResult is every run of one size, ours and the baseline's.
type sizeResult struct {
	size     size
	runs     []runResult
	rss      []float64 // peak resident memory of each child, MiB
	limited  []runResult
	rssLim   []float64 // the same with GOMEMLIMIT set
	kpFull   []cost    // a timed-out run counts as the timeout
	kpChange []cost
	kpFailed string // why the baseline is missing or incomplete
}

// runSync measures every size and prints the tables.
func runSync(args []string, stdout io.Writer) error {
	c, err := prepare(args, parseSyncFlags)
	if err != nil {
		return err
	}
	m := describeMachine()
	var all []sizeResult
	for _, s := range c.sizes {
		r, err := measureSize(c, s)
		if err != nil {
			return fmt.Errorf("size %s: %w", s, err)
		}
		all = append(all, r)
	}
	m.finish()
	writeSyncReport(stdout, m, c, all)
	return nil
}

func measureSize(c syncConfig, s size) (sizeResult, error) {
	r := sizeResult{size: s}
	for i := range c.runs {
		progress("size %s: our run %d/%d", s, i+1, c.runs)
		run, rss, err := syncChild(s, "")
		if err != nil {
			return r, err
		}
		r.runs = append(r.runs, run)
		r.rss = append(r.rss, rss)
	}
	for i := 0; c.memLimit != "" && s.services <= c.memMax && i < c.runs; i++ {
		progress("size %s: our run %d/%d with GOMEMLIMIT=%s", s, i+1, c.runs, c.memLimit)
		run, rss, err := syncChild(s, c.memLimit)
		if err != nil {
			return r, err
		}
		r.limited = append(r.limited, run)
		r.rssLim = append(r.rssLim, rss)
	}
	switch {
	case !c.baseline:
	case s.services > c.kpMax:
		r.kpFailed = fmt.Sprintf("not measured: more than %d Services (-baseline-max-services); at 10,000 it already takes minutes", c.kpMax)
	default:
		measureBaseline(c, s, &r)
	}
	return r, nil
}

// syncChild runs `bench sync-once` in a child process, with GOMEMLIMIT set
// to memLimit unless it is "", and returns its figures and its peak
// resident memory (ru_maxrss, the child's VmHWM).
func syncChild(s size, memLimit string) (runResult, float64, error) {
	self, err := os.Executable()
	if err != nil {
		return runResult{}, 0, err
	}
	var out bytes.Buffer
	cmd := exec.Command(self, "sync-once", "-size", s.String())
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	cmd.Env = os.Environ()
	if memLimit != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+memLimit)
	}
	if err := cmd.Run(); err != nil {
		return runResult{}, 0, fmt.Errorf("child: %w", err)
	}
	var res runResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return runResult{}, 0, fmt.Errorf("child output: %w", err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return res, float64(ru.Maxrss) / 1024, nil // Maxrss is in KiB on Linux
}

// measureBaseline loads kube-proxy's shape of the same cluster with nft -f,
// then its one-endpoint change. Failures are reported in the table, not
// fatal: the baseline is context for our figures.
func measureBaseline(c syncConfig, s size, r *sizeResult) {
	dir, err := os.MkdirTemp("", "nftproxy-bench-")
	if err != nil {
		r.kpFailed = err.Error()
		return
	}
	defer os.RemoveAll(dir)
	full, change := filepath.Join(dir, "full.nft"), filepath.Join(dir, "change.nft")
	if err := writeBaselineFiles(s, full, change); err != nil {
		r.kpFailed = err.Error()
		return
	}
	runs := c.runs
	if s.services > c.kpOnce {
		runs = 1
	}
	for i := range runs {
		progress("size %s: kube-proxy shape run %d/%d", s, i+1, runs)
		fullT, changeT, err := baselineRun(full, change, c.kpTimeout)
		if err != nil {
			r.kpFailed = err.Error()
		}
		if fullT.Wall > 0 {
			r.kpFull = append(r.kpFull, fullT)
		}
		if changeT.Wall > 0 {
			r.kpChange = append(r.kpChange, changeT)
		}
		if err != nil {
			return
		}
	}
}

// writeBaselineFiles writes kube-proxy's full ruleset and the transaction of
// the same one-endpoint change our benchmark makes.
func writeBaselineFiles(s size, full, change string) error {
	snap := generate(s)
	o := baselineOptions()
	if err := writeFile(full, func(w io.Writer) error { return writeKubeProxy(w, snap, o) }); err != nil {
		return err
	}
	one, changed := changeEndpoints(snap, []int{s.services / 2}, 1)
	return writeFile(change, func(w io.Writer) error { return writeKubeProxyChange(w, snap, one, changed, o) })
}

func baselineOptions() kpOptions {
	return kpOptions{ClusterCIDR: "10.0.0.0/8", ServiceCIDR: "10.96.0.0/12", NodeIP: benchNodeIP, NodeName: synth.NodeName}
}

func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fn(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// baselineRun loads full into a fresh namespace, then applies change, and
// returns what each took (zero when not measured).
func baselineRun(full, change string, timeout time.Duration) (cost, cost, error) {
	ns, err := newNetns("kp")
	if err != nil {
		return cost{}, cost{}, err
	}
	defer func() {
		if err := ns.remove(); err != nil {
			progress("warning: %v", err)
		}
	}()
	fullT, err := nftFile(ns, full, timeout)
	if err != nil {
		return fullT, cost{}, fmt.Errorf("nft -f (full): %w", err)
	}
	changeT, err := nftFile(ns, change, timeout)
	if err != nil {
		return fullT, cost{}, fmt.Errorf("nft -f (change): %w", err)
	}
	return fullT, changeT, nil
}

// nftFile runs `nft -f path` from a thread inside ns (the child inherits
// the thread's network namespace), which keeps the cost of `ip netns exec`
// out of the figure. It returns nft's wall time and CPU time: user is nft
// parsing and evaluating, system is mostly the kernel committing. A timeout
// returns the timeout as the wall time.
func nftFile(ns *netns, path string, timeout time.Duration) (cost, error) {
	var c cost
	err := ns.do(func() error {
		cmd := exec.Command("nft", "-f", path)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return err
		}
		timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
		err := cmd.Wait()
		c.Wall = time.Since(start)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			c.User, c.Sys = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
		}
		if !timer.Stop() {
			c.Wall = timeout
			return fmt.Errorf("timed out after %s", timeout)
		}
		if err != nil {
			return fmt.Errorf("%w: %s", err, firstLines(out.String(), 3))
		}
		return nil
	})
	return c, err
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}
