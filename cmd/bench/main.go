// Command bench measures nftproxy at scale and prints markdown tables:
//
//	bench sync      [-sizes 1000x10,10000x10,50000x5] [-runs 3] [-baseline=true]
//	bench dataplane [-services 1,1000,10000,50000] [-conns 2000] [-runs 3]
//	bench agent     [-sizes 10000x10] [-runs 3] [-churn-rate 50] [-json FILE] [-svg FILE]
//	bench plot      -o FILE.svg RESULTS.json...
//	bench shapes    [-sizes 10000x10,50000x5] [-runs 5]
//	bench phases    [-services 10000] [-endpoints 10] [-runs 5] [-cpuprofile FILE] [-memprofile FILE]
//
// sync: for synthetic clusters, the compile time, the first full sync into
// an empty network namespace, a sync after one endpoint of one Service
// moved, a sync after 1% of Services changed, the peak resident memory of
// the process (each run is a child process) and the number of kernel
// objects; next to the same clusters in kube-proxy's nftables shape loaded
// with `nft -f`.
//
// dataplane: connect latency of new TCP connections through a ClusterIP,
// with many Services programmed, next to a direct connection and to
// kube-proxy's shape.
//
// agent: the nftproxy binary and upstream kube-proxy (nftables mode), one
// at a time, each in a node namespace of its own, against the same real
// kube-apiserver and cluster: cold full sync, one-Service changes, a
// sustained churn of EndpointSlice updates; CPU, syncs, network
// programming latency and peak memory (docs/benchmarks.md). plot draws the
// cold sync time and peak memory of agent runs (their -json files) against
// cluster size, as SVG.
//
// shapes: the candidate table shapes (docs/ruleset.md; the old per-Service
// chains, A and L; see shapes_build.go) loaded with nft -f and with our
// applier, and the transactions of one-Service changes in each.
//
// phases: the sync engine alone, phase by phase in one process (compile,
// first Sync, Read, one endpoint, full resync), with memory, CPU and
// optional profiles: where a sync's time and memory go.
//
// They need root. They create their own network namespaces, program
// nftables only inside them, send packets only between them, and remove
// them. `make bench` and `make bench-dataplane` run them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `usage: bench sync|dataplane|agent|shapes|phases [flags] | bench plot -o FILE.svg RESULTS.json...   (-h for flags)`

func main() {
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "sync":
		return runSync(args[1:], os.Stdout)
	case "sync-once": // internal: one run, in a child process
		return runSyncOnce(args[1:])
	case "dataplane":
		return runDataplane(args[1:], os.Stdout)
	case "agent":
		return runAgent(args[1:], os.Stdout)
	case "shapes":
		return runShapes(args[1:], os.Stdout)
	case "plot":
		return runPlot(args[1:])
	case "phases":
		return runPhases(args[1:])
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

func runSyncOnce(args []string) error {
	fs := flag.NewFlagSet("sync-once", flag.ContinueOnError)
	text := fs.String("size", "1000x10", "cluster size")
	cpu := fs.String("cpuprofile", "", "write a CPU profile of the first full sync to this file")
	mem := fs.String("memprofile", "", "write a heap profile taken after the first full sync to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sizes, err := parseSizes(*text)
	if err != nil {
		return err
	}
	return syncOnce(sizes[0], profiles{cpu: *cpu, mem: *mem}, os.Stdout)
}

// prepare parses a benchmark's flags with parse and checks that it can run
// (requireRoot).
func prepare[C any](args []string, parse func([]string) (C, error)) (C, error) {
	c, err := parse(args)
	if err != nil {
		return c, err
	}
	return c, requireRoot()
}
