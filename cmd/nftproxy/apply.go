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
	plan, err := applyPlan(k, desired, t, stderr)
	if err != nil {
		return describeFailure(k, plan, err)
	}
	fmt.Fprintln(stdout, summary(plan))
	fmt.Fprintln(stdout, "timings:", t)
	return nil
}

// maxReplans bounds how often apply plans again after the kernel refused a
// plan because somebody else committed while it was being made.
const maxReplans = 3

// applyPlan plans from the kernel's tables and commits the plan, planning
// again when somebody else committed in between.
func applyPlan(k *kernel.Kernel, desired nft.Ruleset, t *phases, stderr io.Writer) (*nft.Plan, error) {
	for try := 0; ; try++ {
		plan := planFromKernel(k, desired, stderr)
		t.done("read+plan")
		err := k.Apply(plan)
		t.done("commit")
		if !nft.IsConflict(err) || try == maxReplans {
			return plan, err
		}
		fmt.Fprintf(stderr, "warning: %v: planning again\n", err)
	}
}

// planFromKernel diffs against what the kernel holds now, and carries the
// generation it read that at, so that the commit fails rather than apply
// the plan on top of a later change. If the tables cannot be read, the plan
// replaces them whole, which is valid whatever the kernel holds.
func planFromKernel(k *kernel.Kernel, desired nft.Ruleset, stderr io.Writer) *nft.Plan {
	gen, err := k.Generation()
	var current nft.Ruleset
	if err == nil {
		current, err = k.Read()
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v: replacing the tables whole\n", err)
		return nft.Diff(nil, desired)
	}
	plan := nft.Diff(current, desired)
	plan.Gen = gen
	return plan
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
