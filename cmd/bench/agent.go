package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// agentResults is one `bench agent` invocation: the machine and every
// run, as written with -json and read by `bench plot`.
type agentResults struct {
	Machine  string
	Versions map[string]string
	Runs     []agentRun
	// Loads are the API loads before each size's runs, in order.
	Loads []apiLoad `json:",omitempty"`
	// Skipped says why a proxy was not measured at a size.
	Skipped map[string]string `json:",omitempty"`
}

func parseAgentFlags(args []string) (agentConfig, error) {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	var c agentConfig
	sizes := fs.String("sizes", "10000x10", "clusters to measure, SERVICESxENDPOINTS, comma-separated (ascending: the API state grows)")
	proxies := fs.String("proxies", "nftproxy,kube-proxy", "proxies to measure, in this order in each run")
	fs.IntVar(&c.runs, "runs", 3, "runs per proxy and size (medians are printed)")
	fs.IntVar(&c.changes, "changes", 3, "rounds of one-Service changes (replace, remove, add an endpoint) per run; 0 for none")
	fs.IntVar(&c.churnRate, "churn-rate", 50, "EndpointSlice updates per second in the churn; 0 for no churn")
	fs.DurationVar(&c.churnFor, "churn-for", time.Minute, "how long the churn writes")
	fs.DurationVar(&c.coldTimeout, "cold-timeout", 10*time.Minute, "give up waiting for a cold sync after this long")
	fs.IntVar(&c.kpOnceAbove, "kube-proxy-once-above", 10000, "run kube-proxy once only, not -runs times, above this many Services (its cold sync takes minutes)")
	fs.IntVar(&c.kpMax, "kube-proxy-max-services", 50000, "do not run kube-proxy above this many Services")
	fs.StringVar(&c.logs, "logs", "", "keep the proxies' logs and configuration under this directory (default: a temporary one, removed)")
	fs.StringVar(&c.jsonOut, "json", "", "also write every run as JSON to this file (for bench plot)")
	fs.StringVar(&c.svg, "svg", "", "also draw cold sync time and peak memory against cluster size to this SVG file")
	fs.IntVar(&c.writers, "api-writers", 128, "writes in flight while loading each size's cluster")
	fs.BoolVar(&c.loadOnly, "load-only", false, "only load each size's cluster into the API and print the load times; run no proxy")
	fs.StringVar(&c.lock, "lock", "", "a lock file shared with others' heavy work: held shared while loading the API, exclusive while a proxy is measured (flock)")
	fs.StringVar(&c.bins.nftproxy, "nftproxy", "bin/nftproxy", "the nftproxy binary")
	fs.StringVar(&c.bins.kubeProxy, "kube-proxy", "", "the kube-proxy binary (hack/kube-binary.sh kube-proxy)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.sizes, err = parseSizes(*sizes); err != nil {
		return c, err
	}
	for _, p := range strings.Split(*proxies, ",") {
		switch k := proxyKind(strings.TrimSpace(p)); k {
		case nftproxy, kubeProxy:
			c.proxies = append(c.proxies, k)
		default:
			return c, fmt.Errorf("-proxies: unknown proxy %q", p)
		}
	}
	if c.runs < 1 || c.churnRate < 0 || c.changes < 0 || c.writers < 1 {
		return c, errors.New("want -runs >= 1, -churn-rate >= 0, -changes >= 0, -api-writers >= 1")
	}
	if c.loadOnly {
		return c, nil
	}
	return c, checkBinaries(c)
}

func checkBinaries(c agentConfig) error {
	for _, k := range c.proxies {
		bin := c.bins.nftproxy
		if k == kubeProxy {
			bin = c.bins.kubeProxy
		}
		if bin == "" {
			return fmt.Errorf("no %s binary: pass -%s", k, k)
		}
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s binary: %w", k, err)
		}
	}
	return nil
}

// runAgent measures the proxies against a real API server and prints the
// tables.
func runAgent(args []string, stdout io.Writer) error {
	c, err := prepare(args, parseAgentFlags)
	if err != nil {
		return err
	}
	if c.logs == "" {
		if c.logs, err = os.MkdirTemp("", "nftproxy-bench-agent-"); err != nil {
			return err
		}
		defer os.RemoveAll(c.logs)
	}
	m := describeMachine()
	res := &agentResults{Versions: versions(c), Skipped: map[string]string{}}
	code := e2e.Main(func(t testing.TB) { agentSizes(t, c, res) })
	m.finish()
	res.Machine = m.String()
	if len(res.Runs) > 0 || len(res.Loads) > 0 {
		writeAgentReport(stdout, res)
		if err := saveAgent(c, res); err != nil {
			return err
		}
	}
	if code != 0 {
		return errors.New("agent benchmark failed (see above)")
	}
	return nil
}

// agentSizes measures each size in turn, growing the API's cluster.
func agentSizes(t testing.TB, c agentConfig, res *agentResults) {
	l, err := openLock(c.lock)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(l.close)
	a := startAPI(t, c.writers)
	for _, s := range c.sizes {
		l.hold(t, false)
		res.Loads = append(res.Loads, a.resize(t, s))
		if c.loadOnly {
			continue
		}
		for run := range c.runs {
			for _, kind := range c.proxies {
				if why := skip(c, kind, s, run); why != "" {
					res.Skipped[string(kind)+" "+s.String()] = why
					continue
				}
				progress("size %s, run %d/%d: %s", s, run+1, c.runs, kind)
				l.hold(t, true)
				r, err := measureProxy(a, c, kind, s)
				l.hold(t, false)
				if err != nil {
					t.Fatalf("size %s, %s: %v", s, kind, err)
				}
				progress("  cold sync %s, peak memory %s", dur(r.Cold), mebibytes(r.HWM))
				res.Runs = append(res.Runs, r)
			}
		}
	}
}

// skip says why kind is not run this time at size s, or "".
func skip(c agentConfig, kind proxyKind, s size, run int) string {
	if kind != kubeProxy {
		return ""
	}
	switch {
	case s.services > c.kpMax:
		return fmt.Sprintf("not run above %d Services (-kube-proxy-max-services)", c.kpMax)
	case s.services > c.kpOnceAbove && run > 0:
		return fmt.Sprintf("run once above %d Services (-kube-proxy-once-above)", c.kpOnceAbove)
	}
	return ""
}

// versions are the proxies' and the API server's versions, printed with
// the tables.
func versions(c agentConfig) map[string]string {
	out := map[string]string{}
	for name, cmd := range map[string][]string{
		"nftproxy":       {c.bins.nftproxy, "version"},
		"kube-proxy":     {c.bins.kubeProxy, "--version"},
		"kube-apiserver": {os.Getenv("KUBE_APISERVER"), "--version"},
	} {
		if cmd[0] == "" {
			continue
		}
		if v, err := command(time.Minute, cmd...); err == nil {
			out[name] = firstLines(v, 1)
		}
	}
	return out
}

func saveAgent(c agentConfig, res *agentResults) error {
	if c.jsonOut != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if c.svg != "" {
		return writeFile(c.svg, func(w io.Writer) error { return drawScale(w, []*agentResults{res}) })
	}
	return nil
}

func mebibytes(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// runPlot draws the picture from the -json files of agent runs.
func runPlot(args []string) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	out := fs.String("o", "", "the SVG file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("usage: bench plot -o FILE.svg RESULTS.json...")
	}
	var all []*agentResults
	for _, path := range fs.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		res := &agentResults{}
		if err := json.Unmarshal(b, res); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, res)
	}
	return writeFile(*out, func(w io.Writer) error { return drawScale(w, all) })
}

// runLock is -lock: the machine's shared lock for heavy work, held shared
// while the API is loaded and exclusive while a proxy is measured, so that
// the exclusive windows stay short. Without -lock it does nothing.
type runLock struct{ f *os.File }

func openLock(path string) (*runLock, error) {
	if path == "" {
		return &runLock{}, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-lock: %w", err)
	}
	return &runLock{f: f}, nil
}

// hold takes the lock exclusive or shared, waiting for it (flock converts
// a lock already held).
func (l *runLock) hold(t testing.TB, exclusive bool) {
	if l.f == nil {
		return
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
		progress("waiting for the exclusive lock %s (load %s)", l.f.Name(), loadAverage())
	}
	if err := syscall.Flock(int(l.f.Fd()), how); err != nil {
		t.Fatalf("lock %s: %v", l.f.Name(), err)
	}
}

func (l *runLock) close() {
	if l.f != nil {
		l.f.Close() // releases the lock
	}
}
