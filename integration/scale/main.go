// Command scale measures nftproxy against a real kube-apiserver at scale
// and prints figures (hack/e2e-scale.sh runs it as root):
//
//   - network programming latency: the time from an EndpointSlice update
//     sent to the API server until the new endpoint's rule is in the
//     kernel, read back over netlink in the node namespace, as the median
//     (and range) of several runs;
//   - nftproxy's resident memory (VmRSS, and the peak VmHWM) once it has
//     programmed every Service;
//   - the time from nftproxy's start to all Services programmed.
//
// Services and EndpointSlices are created through the API server before
// nftproxy starts; endpoint addresses need not exist (no packets are sent).
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
	flag.IntVar(&cfg.services, "services", 1000, "Services to create")
	flag.IntVar(&cfg.endpoints, "endpoints", 10, "endpoints per Service")
	flag.IntVar(&cfg.runs, "runs", 7, "EndpointSlice updates to time")
	flag.DurationVar(&cfg.pause, "pause", 2*time.Second, "pause between timed updates, longer than minSyncPeriod so each finds the proxy idle")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "scale: needs root (network namespaces, nftables)")
		os.Exit(1)
	}
	os.Exit(e2e.Main(func(t testing.TB) { measure(t, cfg) }))
}

type config struct {
	services, endpoints, runs int
	pause                     time.Duration
}
