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
	"syscall"
	"time"

	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// dpConfig is the data-plane benchmark's flags.
type dpConfig struct {
	services  []int
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
	c := dpConfig{}
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
	for _, f := range strings.Split(*services, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return c, fmt.Errorf("-services: %q is not a positive number", f)
		}
		c.services = append(c.services, n)
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

// dpBench holds what every case needs.
type dpBench struct {
	c     dpConfig
	t     *topology
	k     *kernel.Kernel
	cases int // source addresses used so far
	dir   string
}

// targetPort of the "http" Service port (80) in the synthetic clusters.
const httpTarget = 8080

func runDataplane(args []string, stdout io.Writer) error {
	c, err := parseDataplaneFlags(args)
	if err != nil {
		return err
	}
	if err := requireRoot(); err != nil {
		return err
	}
	m := describeMachine()
	b, err := newDPBench(c)
	if err != nil {
		return err
	}
	rows, err := b.all()
	if cerr := b.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	m.finish()
	writeDataplaneReport(stdout, m, c, rows)
	return nil
}

func newDPBench(c dpConfig) (*dpBench, error) {
	t, err := newTopology()
	if err != nil {
		return nil, err
	}
	b := &dpBench{c: c, t: t}
	if b.dir, err = os.MkdirTemp("", "nftproxy-bench-"); err != nil {
		return nil, errors.Join(err, t.close())
	}
	fd, err := t.node.open()
	if err == nil {
		b.k, err = kernel.Open(fd)
		syscall.Close(fd) // the socket keeps its namespace
	}
	if err == nil {
		err = t.listen(httpTarget)
	}
	if err != nil {
		return nil, errors.Join(err, b.close())
	}
	return b, nil
}

func (b *dpBench) close() error {
	if b.k != nil {
		b.k.Close()
	}
	os.RemoveAll(b.dir)
	return b.t.close()
}

// all measures the floor, each number of Services, then the big Service.
func (b *dpBench) all() ([]dpRow, error) {
	progress("direct connection (floor)")
	floor, err := b.measure(netip.AddrPortFrom(offset(endpointBase, 0), httpTarget))
	if err != nil {
		return nil, err
	}
	rows := []dpRow{{name: "direct to the backend, no Service (floor)", ours: floor}}
	for _, n := range b.c.services {
		snap := generate(size{n, b.c.endpoints})
		svc := targetService(snap)
		row, err := b.caseRow(fmt.Sprintf("ClusterIP, %d endpoints", b.c.endpoints), n, snap, svc)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	snap := endpointCluster(b.c.big)
	for i, name := range []string{"ClusterIP, 2 endpoints", fmt.Sprintf("ClusterIP, %d endpoints", b.c.big)} {
		row, err := b.caseRow(name, 2, snap, &snap.Services[i])
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
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
			ClusterIPs: []netip.Addr{offset(clusterIPBase, i+1)},
			Ports:      []model.ServicePort{{Name: "http", Protocol: model.TCP, Port: 80}}}
		snap.Services = append(snap.Services, svc)
		snap.Slices = append(snap.Slices, slicesFor(&svc, i*10000, n)...)
	}
	return snap
}

// caseRow measures svc's ClusterIP with snap programmed by us, then in
// kube-proxy's shape.
func (b *dpBench) caseRow(name string, n int, snap *model.Snapshot, svc *model.Service) (dpRow, error) {
	row := dpRow{name: name, services: n}
	dst := netip.AddrPortFrom(svc.ClusterIPs[0], 80)
	progress("%d Services: ours", n)
	if _, err := dataplane.New(b.k).Sync(dataplane.Input{Snapshot: snap, Node: benchNodeModel(netip.MustParseAddr("10.0.1.1")), Options: benchOptions()}); err != nil {
		return row, fmt.Errorf("program %d Services: %w", n, err)
	}
	var err error
	if row.ours, err = b.measure(dst); err != nil {
		return row, err
	}
	if err := b.k.Cleanup(); err != nil {
		return row, err
	}
	switch {
	case !b.c.baseline:
		row.kpSkipped = "not measured"
	case n > b.c.kpMax:
		row.kpSkipped = fmt.Sprintf("not measured: more than %d Services takes minutes to load", b.c.kpMax)
	default:
		progress("%d Services: kube-proxy shape", n)
		row.kp, err = b.kubeProxyCase(snap, dst)
	}
	return row, err
}

func (b *dpBench) kubeProxyCase(snap *model.Snapshot, dst netip.AddrPort) (latency, error) {
	path := filepath.Join(b.dir, "kube-proxy.nft")
	o := baselineOptions()
	o.NodeIP = netip.MustParseAddr("10.0.1.1")
	if err := writeFile(path, func(w io.Writer) error { return writeKubeProxy(w, snap, o) }); err != nil {
		return latency{}, err
	}
	if _, err := nftFile(b.t.node, path, b.c.kpTimeout); err != nil { // load time is the sync benchmark's business
		return latency{}, fmt.Errorf("load kube-proxy shape: %w", err)
	}
	l, err := b.measure(dst)
	if _, derr := b.t.node.exec(time.Minute, "nft", "delete", "table", "ip", "kube-proxy"); err == nil {
		err = derr
	}
	return l, err
}

// measure connects to dst from a fresh source address: a short warm-up
// (neighbour entries), then c.runs runs of c.conns connections.
func (b *dpBench) measure(dst netip.AddrPort) (latency, error) {
	b.cases++
	src, err := b.t.addClientSource(b.cases)
	if err != nil {
		return latency{}, err
	}
	if _, err := probe(b.t.client, src, dst, 10000, 50); err != nil {
		return latency{}, fmt.Errorf("warm-up: %w", err)
	}
	var p50, p99 []float64
	for r := range b.c.runs {
		xs, err := probe(b.t.client, src, dst, 10100+r*b.c.conns, b.c.conns)
		if err != nil {
			return latency{}, err
		}
		p50, p99 = append(p50, percentile(xs, 50)), append(p99, percentile(xs, 99))
	}
	return latency{median(p50), median(p99)}, nil
}
