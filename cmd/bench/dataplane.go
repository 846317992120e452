package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// dpConfig is the data-plane benchmark's flags.
type dpConfig struct {
	services  []int
	maglev    []int
	maglevM   int
	endpoints int
	big       int
	conns     int
	runs      int
	baseline  bool
	kpMax     int
	kpTimeout time.Duration
}

func parseDataplaneFlags(args []string) (dpConfig, error) {
	fs := flag.NewFlagSet("dataplane", flag.ContinueOnError)
	services := fs.String("services", "1,1000,10000,50000", "numbers of Services programmed, comma-separated")
	maglev := fs.String("maglev", "10000", "numbers of Services programmed, every 10th with Maglev, for the Maglev rows; \"\" for none")
	c := dpConfig{}
	fs.IntVar(&c.maglevM, "maglev-table-size", 251, "Maglev table size M of those rows (each Maglev entry is M elements, and the kernel needs several KiB per element while it commits a transaction)")
	fs.IntVar(&c.endpoints, "endpoints", 5, "endpoints per Service in those clusters")
	fs.IntVar(&c.big, "big-service", 1000, "endpoints of the big Service, compared with a 2-endpoint one")
	fs.IntVar(&c.conns, "conns", 2000, "connections per run")
	fs.IntVar(&c.runs, "runs", 3, "runs per figure (the median of each run's percentiles is printed)")
	fs.BoolVar(&c.baseline, "baseline", true, "also measure kube-proxy's shape")
	fs.IntVar(&c.kpMax, "baseline-max-services", 10000, "skip kube-proxy's shape above this many Services (loading it takes minutes)")
	fs.DurationVar(&c.kpTimeout, "baseline-timeout", 5*time.Minute, "give up loading kube-proxy's shape after this long")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.services, err = parseCounts("services", *services); err != nil {
		return c, err
	}
	if *maglev != "" {
		if c.maglev, err = parseCounts("maglev", *maglev); err != nil {
			return c, err
		}
	}
	if c.conns < 100 || c.runs < 1 || c.runs*c.conns > 40000 {
		return c, errors.New("want -conns >= 100, -runs >= 1 and runs x conns <= 40000 (source ports)")
	}
	return c, nil
}

// latency is one case's figures: the median over runs of each run's p50
// and p99 connect time, in seconds. Zero when not measured.
type latency struct{ p50, p99 float64 }

type dpRow struct {
	name      string
	services  int
	ours, kp  latency
	kpSkipped string
}

// dpCase is one thing measured: a row's ClusterIP (or the floor's
// endpoint) through one node namespace holding that row's rules, ours or
// kube-proxy's shape.
type dpCase struct {
	row  int
	kp   bool
	snap *model.Snapshot // what the node is loaded with; nil: no rules
	dst  netip.AddrPort
	p    *path
	cur  []float64 // this run's connect times
	p50  []float64 // one per run
	p99  []float64
}

// targetPort of the "http" Service port (80) in the synthetic clusters.
const httpTarget = 8080

// batchConns is how many connections a case makes before the next case
// takes its turn: cases alternate, so that the machine's load, which
// drifts over seconds, weighs on all of them alike.
const batchConns = 100

func runDataplane(args []string, stdout io.Writer) error {
	c, err := prepare(args, parseDataplaneFlags)
	if err != nil {
		return err
	}
	m := describeMachine()
	rows, cases := planCases(c)
	t, err := newTopology(len(cases))
	if err != nil {
		return err
	}
	err = measureCases(c, t, cases)
	if cerr := t.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, k := range cases {
		l := latency{median(k.p50), median(k.p99)}
		if k.kp {
			rows[k.row].kp = l
		} else {
			rows[k.row].ours = l
		}
	}
	m.finish()
	writeDataplaneReport(stdout, m, c, rows)
	return nil
}

// planCases lists the table's rows and the cases that fill them: the
// floor, each number of Services, the 2- and the big-endpoint Service.
func planCases(c dpConfig) ([]dpRow, []*dpCase) {
	rows := []dpRow{{name: "direct to the backend, no Service (floor)"}}
	cases := []*dpCase{{row: 0, dst: netip.AddrPortFrom(synth.Endpoint(0), httpTarget)}}
	add := func(row dpRow, snap *model.Snapshot, svc *model.Service) {
		dst := netip.AddrPortFrom(svc.ClusterIPs[0], 80)
		cases = append(cases, &dpCase{row: len(rows), snap: snap, dst: dst})
		switch {
		case !c.baseline:
			row.kpSkipped = "not measured"
		case row.services > c.kpMax:
			row.kpSkipped = fmt.Sprintf("not measured: more than %d Services takes minutes to load", c.kpMax)
		default:
			cases = append(cases, &dpCase{row: len(rows), kp: true, snap: snap, dst: dst})
		}
		rows = append(rows, row)
	}
	for _, n := range c.services {
		snap := generate(size{services: n, endpoints: c.endpoints})
		add(dpRow{name: fmt.Sprintf("ClusterIP, %d endpoints", c.endpoints), services: n}, snap, targetService(snap))
	}
	for _, n := range c.maglev {
		snap := generate(size{services: n, endpoints: c.endpoints, maglev: 10})
		add(dpRow{name: fmt.Sprintf("ClusterIP, %d endpoints, Maglev (every 10th Service)", c.endpoints), services: n},
			snap, maglevService(snap))
	}
	snap := endpointCluster(c.big)
	add(dpRow{name: "ClusterIP, 2 endpoints", services: 2}, snap, &snap.Services[0])
	add(dpRow{name: fmt.Sprintf("ClusterIP, %d endpoints", c.big), services: 2}, snap, &snap.Services[1])
	return rows, cases
}

// measureCases loads every case's rules into its node, then measures the
// cases in alternation.
func measureCases(c dpConfig, t *topology, cases []*dpCase) error {
	if err := t.listen(httpTarget); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "nftproxy-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for i, k := range cases {
		k.p = t.paths[i]
		if err := load(c, k, dir); err != nil {
			return err
		}
		k.snap = nil // the kernel holds the rules now
		if _, err := probe(k.p.client, k.p.src, k.dst, 10000, 50); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	for r := range c.runs {
		progress("connections, run %d/%d", r+1, c.runs)
		if err := measureRun(c, cases, 10100+r*c.conns); err != nil {
			return err
		}
	}
	return nil
}

// measureRun makes c.conns connections per case, batchConns at a time per
// case in turn, from source ports firstPort on.
func measureRun(c dpConfig, cases []*dpCase, firstPort int) error {
	for off := 0; off < c.conns; off += batchConns {
		for _, k := range cases {
			xs, err := probe(k.p.client, k.p.src, k.dst, firstPort+off, min(batchConns, c.conns-off))
			if err != nil {
				return err
			}
			k.cur = append(k.cur, xs...)
		}
	}
	for _, k := range cases {
		k.p50, k.p99 = append(k.p50, percentile(k.cur, 50)), append(k.p99, percentile(k.cur, 99))
		k.cur = nil
	}
	return nil
}

// load programs a case's node: our table through the Dataplane, or
// kube-proxy's shape with nft -f.
func load(c dpConfig, k *dpCase, dir string) error {
	switch {
	case k.snap == nil:
		return nil
	case k.kp:
		progress("loading %d Services in kube-proxy's shape", len(k.snap.Services))
		path := filepath.Join(dir, "kube-proxy.nft")
		o := baselineOptions()
		o.NodeIP = k.p.nodeIP
		if err := writeFile(path, func(w io.Writer) error { return writeKubeProxy(w, k.snap, o) }); err != nil {
			return err
		}
		_, err := nftFile(k.p.node, path, c.kpTimeout) // load time is the sync benchmark's business
		return err
	}
	progress("loading %d Services, ours", len(k.snap.Services))
	kern, err := k.p.node.kernel()
	if err != nil {
		return err
	}
	defer kern.Close()
	_, err = dataplane.New(kern).Sync(dataplane.Input{Snapshot: k.snap, Node: benchNodeModel(k.p.nodeIP), Options: benchOptionsFor(size{maglevM: c.maglevM})})
	return err
}

// parseCounts reads a comma-separated list of positive numbers.
func parseCounts(flag, text string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-%s: %q is not a positive number", flag, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// maglevService is a Service from the middle of snap that uses Maglev and
// has an http port.
func maglevService(snap *model.Snapshot) *model.Service {
	for i := len(snap.Services) / 2; i < len(snap.Services); i++ {
		if s := &snap.Services[i]; s.LoadBalancing == "maglev" && s.Ports[0].Port == 80 {
			return s
		}
	}
	return targetService(snap)
}

// targetService is a Service from the middle of snap with an http port.
func targetService(snap *model.Snapshot) *model.Service {
	for i := len(snap.Services) / 2; i < len(snap.Services); i++ {
		if snap.Services[i].Ports[0].Port == 80 {
			return &snap.Services[i]
		}
	}
	return &snap.Services[0] // a 1-Service cluster: Service 0 has http
}

// endpointCluster has two ClusterIP Services: one with 2 endpoints and one
// with big endpoints.
func endpointCluster(big int) *model.Snapshot {
	snap := &model.Snapshot{}
	for i, n := range []int{2, big} {
		svc := model.Service{Namespace: "ns-0", Name: fmt.Sprintf("eps-%d", n), Type: model.ClusterIP,
			ClusterIPs: []netip.Addr{synth.ClusterIP(i + 1)},
			Ports:      []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: 80}}}
		snap.Services = append(snap.Services, svc)
		snap.Slices = append(snap.Slices, synth.Slices(&svc, i*10000, n, true)...)
	}
	return snap
}
