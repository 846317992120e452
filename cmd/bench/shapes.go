package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/model"
	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

// shapesConfig is `bench shapes`' flags.
type shapesConfig struct {
	sizes   []size
	runs    int
	shapes  []string
	timeout time.Duration
}

// shapeResult is one shape at one size: loads and transactions, each a
// cost per run.
type shapeResult struct {
	shape, size   string
	chains, rules int
	elements      int
	nftLoad       []cost
	ourLoad       []cost
	changes       map[string][]cost // by shapeChanges' name
	ops           map[string]int
	failed        string
}

// shapeChanges are the transactions measured: each turns the cluster into
// a variant where the middle Service has other endpoints, or where one
// Service more exists.
var shapeChanges = []struct {
	name, label string
	// back, when set, labels the transaction that takes the change back
	// (timed too, in a column of its own).
	back    string
	variant func(snap *model.Snapshot, i int) *model.Snapshot
}{
	{"replace", "one endpoint address replaced", "", endpointsChange(func(b []netip.Addr) []netip.Addr {
		return append([]netip.Addr{synth.MovedEndpoint(1)}, b[1:]...)
	})},
	{"count-present", "endpoint count changed, to a count in use (n -> n-1)", "", endpointsChange(func(b []netip.Addr) []netip.Addr { return b[1:] })},
	{"count-new", "endpoint count changed, to a new count (n -> n+1)", "back (n+1 -> n: the count n+1 gone)", endpointsChange(func(b []netip.Addr) []netip.Addr {
		return append(append([]netip.Addr(nil), b...), synth.MovedEndpoint(2))
	})},
	{"count-new-down", "endpoint count changed, down to a new count (n -> n-2)", "", endpointsChange(func(b []netip.Addr) []netip.Addr { return b[2:] })},
	{"service-added", "a Service added (n endpoints)", "", withOneMoreService},
	{"service-removed", "a Service removed", "", withoutService},
	{"port-added", "a port added", "", withSecondPort},
	{"affinity", "session affinity turned on", "session affinity turned off", withAffinity},
	{"type", "type changed (ClusterIP -> NodePort)", "type changed back (NodePort -> ClusterIP)", asNodePort},
}

// endpointsChange returns the variant where Service i's endpoint
// addresses are what addrs makes of the ones it has.
func endpointsChange(addrs func(base []netip.Addr) []netip.Addr) func(*model.Snapshot, int) *model.Snapshot {
	return func(snap *model.Snapshot, i int) *model.Snapshot {
		return withEndpoints(snap, i, addrs(sliceAddrs(snap, i)))
	}
}

func parseShapesFlags(args []string) (shapesConfig, error) {
	fs := flag.NewFlagSet("shapes", flag.ContinueOnError)
	sizes := fs.String("sizes", "10000x10,50000x5", "clusters, SERVICESxENDPOINTS (ClusterIP Services, one port), comma-separated")
	var c shapesConfig
	names := fs.String("shapes", strings.Join(shapeNames, ","), "shapes to measure, comma-separated")
	fs.IntVar(&c.runs, "runs", 5, "runs of each load and transaction (medians are printed)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up on one nft -f load after this long")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.sizes, err = parseSizes(*sizes); err == nil && c.runs < 1 {
		err = errors.New("-runs must be at least 1")
	}
	for _, n := range strings.Split(*names, ",") {
		if !slices.Contains(shapeNames, n) {
			return c, fmt.Errorf("-shapes: unknown shape %q (have %s)", n, strings.Join(shapeNames, ", "))
		}
		c.shapes = append(c.shapes, n)
	}
	return c, err
}

// runShapes measures every shape at every size and prints the table.
func runShapes(args []string, stdout io.Writer) error {
	c, err := prepare(args, parseShapesFlags)
	if err != nil {
		return err
	}
	m := describeMachine()
	var all []*shapeResult
	for _, s := range c.sizes {
		for _, name := range c.shapes {
			progress("shape %s at %s", name, s)
			r, err := measureShape(c, name, s)
			if err != nil {
				return fmt.Errorf("shape %s at %s: %w", name, s, err)
			}
			all = append(all, r)
		}
	}
	m.finish()
	writeShapesReport(stdout, m, c, all)
	return nil
}

// shapeVariants are the cluster and its changed variants, built once per
// size and shape.
type shapeVariants struct {
	base    nft.Ruleset
	changed map[string]nft.Ruleset
}

func buildVariants(name string, s size) (*shapeVariants, error) {
	snap := shapeCluster(s.services, s.endpoints)
	v := &shapeVariants{changed: map[string]nft.Ruleset{}}
	var err error
	if v.base, err = buildShape(name, snap); err != nil {
		return nil, err
	}
	for _, ch := range shapeChanges {
		if v.changed[ch.name], err = buildShape(name, ch.variant(snap, s.services/2)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func sliceAddrs(snap *model.Snapshot, i int) []netip.Addr {
	var out []netip.Addr
	for _, e := range snap.Slices[i].Endpoints {
		out = append(out, e.Addresses[0])
	}
	return out
}

func measureShape(c shapesConfig, name string, s size) (*shapeResult, error) {
	v, err := buildVariants(name, s)
	if err != nil {
		return nil, err
	}
	r := &shapeResult{shape: name, size: s.String(), changes: map[string][]cost{}, ops: map[string]int{}}
	countShape(v.base, r)
	dir, err := os.MkdirTemp("", "nftproxy-shapes-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "table.nft")
	if err := os.WriteFile(path, []byte(v.base.Text()), 0o644); err != nil {
		return nil, err
	}
	for run := range c.runs {
		progress("  run %d/%d", run+1, c.runs)
		if err := nftLoadOnce(c, path, r); err != nil {
			r.failed = err.Error()
			break
		}
	}
	for range c.runs {
		if err := applierRun(v, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func countShape(rs nft.Ruleset, r *shapeResult) {
	for _, t := range rs {
		r.chains += len(t.Chains)
		for _, c := range t.Chains {
			r.rules += len(c.Rules)
		}
		for _, s := range t.Sets {
			r.elements += len(s.Elements)
		}
	}
}

// nftLoadOnce loads the table's text with nft -f into a fresh namespace.
func nftLoadOnce(c shapesConfig, path string, r *shapeResult) error {
	ns, err := newNetns("shape")
	if err != nil {
		return err
	}
	defer func() {
		if err := ns.remove(); err != nil {
			progress("warning: %v", err)
		}
	}()
	t, err := nftFile(ns, path, c.timeout)
	r.nftLoad = append(r.nftLoad, t)
	return err
}

// applierRun loads the table with our applier into a fresh namespace,
// then times each change's transaction and the one that takes it back.
func applierRun(v *shapeVariants, r *shapeResult) error {
	ns, err := newNetns("shape")
	if err != nil {
		return err
	}
	fd, err := ns.open()
	if err == nil {
		err = applierTransactions(fd, v, r)
		syscall.Close(fd)
	}
	return errors.Join(err, ns.remove())
}

func applierTransactions(fd int, v *shapeVariants, r *shapeResult) error {
	k, err := kernel.Open(fd)
	if err != nil {
		return err
	}
	defer k.Close()
	load, err := timedApply(k, nft.Diff(nil, v.base))
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	r.ourLoad = append(r.ourLoad, load)
	for _, ch := range shapeChanges {
		plan := nft.Diff(v.base, v.changed[ch.name])
		t, err := timedApply(k, plan)
		if err != nil {
			return fmt.Errorf("%s: %w", ch.name, err)
		}
		r.changes[ch.name] = append(r.changes[ch.name], t)
		r.ops[ch.name] = len(plan.Ops)
		back := nft.Diff(v.changed[ch.name], v.base)
		if t, err = timedApply(k, back); err != nil {
			return fmt.Errorf("%s, back: %w", ch.name, err)
		}
		r.changes[ch.name+"/back"] = append(r.changes[ch.name+"/back"], t)
		r.ops[ch.name+"/back"] = len(back.Ops)
	}
	return nil
}

// timedApply commits plan and returns its wall time and this process's
// CPU: the kernel runs the transaction in the sending thread, so system
// time is mostly the kernel's.
func timedApply(k *kernel.Kernel, plan *nft.Plan) (cost, error) {
	return measureErr(func() (int, int, error) {
		err := k.Apply(plan)
		return len(plan.Ops), k.LastBatchBytes(), err
	})
}
