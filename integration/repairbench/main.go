// Command repairbench measures how fast nftproxy repairs changes somebody
// else makes to its table (hack/bench-repair.sh runs it as root).
//
// In a network namespace of its own it programs a synthetic cluster (the
// benchmark's mix, proxy/model/synth) with the Dataplane, as the agent
// does, and runs its Watch. Then, for each kind of tampering, several
// times: it runs the `nft` command that tampers, and polls the ruleset
// generation (one small netlink request every millisecond) until the
// repair's commit has moved it. It prints, per kind, the medians (and
// ranges) of the time from starting the command to the repair committed,
// from the tampering committed to the repair committed, and of that the
// repair itself (planning and committing, Repair.Elapsed), with the
// operations each repair sent and whether it had to read the tables back;
// and the machine's load average before and after. Each kind's result is
// checked against what the kernel holds, read back once at the end.
package main

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.services, "services", 10000, "Services in the cluster")
	flag.IntVar(&cfg.endpoints, "endpoints", 10, "ready endpoints per Service")
	flag.IntVar(&cfg.runs, "runs", 7, "tamperings of each kind")
	flag.DurationVar(&cfg.pause, "pause", 1500*time.Millisecond,
		"pause between tamperings, longer than the second after which repairs are no longer spaced out")
	flag.StringVar(&cfg.only, "only", "", "measure only the kinds whose name contains this")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the tamperings (not the set-up) to this file")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "repairbench: needs root (network namespaces, nftables)")
		os.Exit(1)
	}
	os.Exit(e2e.Main(func(t testing.TB) { measure(t, cfg) }))
}

type config struct {
	services, endpoints, runs int
	pause                     time.Duration
	only, cpuProfile          string
}
