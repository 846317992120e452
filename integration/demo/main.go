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
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	requests := flag.Int("requests", 30, "HTTP requests to each Service address")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "demo: needs root (network namespaces, nftables): sudo make demo")
		os.Exit(1)
	}
	t := &tb{}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- run(t, *requests) }()
	var err error
	select {
	case err = <-done:
	case sig := <-interrupted:
		err = fmt.Errorf("interrupted (%v)", sig)
	}
	fmt.Fprintln(os.Stderr, "demo: cleaning up")
	t.cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run is the demo; a harness failure comes back as an error.
func run(t *tb, requests int) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case fatal:
			err = fmt.Errorf("%s", r.msg)
		default: // a bug; still clean up before reporting it
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	d := setup(t)
	d.report(t, requests)
	return nil
}
