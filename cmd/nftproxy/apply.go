package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
)

// locateLimit bounds the plans whose failing operation apply pins down:
// locating costs about log2(ops) aborted transactions.
const locateLimit = 50000

// phases records how long each step of a command took, for its output.
type phases struct {
	last  time.Time
	steps []string
}

func newPhases() *phases { return &phases{last: time.Now()} }

func (p *phases) done(name string) {
	now := time.Now()
	p.steps = append(p.steps, fmt.Sprintf("%s %.3fs", name, now.Sub(p.last).Seconds()))
	p.last = now
}

func (p *phases) String() string { return strings.Join(p.steps, ", ") }

func runApply(args []string, stdout, stderr io.Writer) error {
	var m manifestFlags
	if err := parseFlags("apply", args, stderr, m.register); err != nil {
		return err
	}
	t := newPhases()
	desired, err := m.compileManifests(stderr)
	if err != nil {
		return err
	}
	t.done("load+compile")
	k, err := kernel.Open(-1)
	if err != nil {
		return err
	}
	defer k.Close()
	plan := planFromKernel(k, desired, stderr)
	t.done("read+plan")
	if err := k.Apply(plan); err != nil {
		return describeFailure(k, plan, err)
	}
	t.done("commit")
	fmt.Fprintln(stdout, summary(plan))
	fmt.Fprintln(stdout, "timings:", t)
	return nil
}

// planFromKernel diffs against what the kernel holds now; if that cannot be
// read, the plan replaces the tables whole.
func planFromKernel(k *kernel.Kernel, desired nft.Ruleset, stderr io.Writer) *nft.Plan {
	current, err := k.Read()
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v: replacing the tables whole\n", err)
		current = nil
	}
	return nft.Diff(current, desired)
}

// summary says what a committed plan changed.
func summary(p *nft.Plan) string {
	if p.Empty() {
		return "no changes"
	}
	kind := "patched"
	if p.Full {
		kind = "replaced"
	}
	return fmt.Sprintf("applied %d operations in one transaction (tables %s): %s", len(p.Ops), kind, p.Stats())
}

// describeFailure names the operation the kernel rejected, when the plan is
// small enough to find it.
func describeFailure(k *kernel.Kernel, plan *nft.Plan, err error) error {
	var opErr *nft.OpError
	if !errors.As(err, &opErr) || opErr.Index >= 0 || len(plan.Ops) > locateLimit {
		return fmt.Errorf("apply plan (%d ops), nothing changed: %w", len(plan.Ops), err)
	}
	if i, lerr := k.Locate(plan); lerr == nil && i >= 0 {
		opErr.Index, opErr.Op = i, plan.Ops[i]
	}
	return fmt.Errorf("apply plan (%d ops), nothing changed: %w", len(plan.Ops), opErr)
}

func runCleanup(args []string, stdout, stderr io.Writer) error {
	if err := parseFlags("cleanup", args, stderr, func(*pflag.FlagSet) {}); err != nil {
		return err
	}
	k, err := kernel.Open(-1)
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.Cleanup(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "removed table ip kube-proxy and table ip6 kube-proxy")
	return nil
}
