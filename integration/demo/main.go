// Command demo is `make demo`: a tour of nftproxy on a real kube-apiserver.
//
// It builds a small lab in network namespaces (a node, an external client,
// three pods), starts etcd and kube-apiserver in the node namespace,
// creates a ClusterIP, a NodePort and a LoadBalancer Service with HTTP
// backends in the pods, runs nftproxy in the node namespace, sends a
// bounded number of HTTP requests from the client to each Service address,
// prints how they spread over the pods and the table nftproxy programmed,
// and removes everything, also on failure or Ctrl-C. It needs root, etcd,
// and $NFTPROXY and $KUBE_APISERVER (hack/demo.sh sets them).
package main

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

func main() {
	requests := flag.Int("requests", 30, "HTTP requests to each Service address")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "demo: needs root (network namespaces, nftables): sudo make demo")
		os.Exit(1)
	}
	os.Exit(e2e.Main(func(t testing.TB) {
		setup(t).report(t, *requests)
	}))
}
