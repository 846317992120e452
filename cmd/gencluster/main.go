// Command gencluster writes a synthetic cluster as Kubernetes manifests:
// one Node (node-1), the Services and their EndpointSlices, for timing
// `nftproxy compile` and `nftproxy apply` at scale. The cluster is the
// benchmarks' (proxy/model/synth, docs/benchmarks.md): Service i gets
// ClusterIP 10.96.0.0/12 + i, endpoints count up from 10.128.0.0, and the
// mix of ports, types and affinity is the benchmark's.
//
//	go run ./cmd/gencluster -services 10000 -endpoints 10 -o /tmp/cluster.yaml
//
// With -change-endpoint the first endpoint of Service 0 moves to another
// address, to time a one-Service change.
//
// Feature mixes on top (for example half with session affinity, a quarter
// with externalTrafficPolicy: Local):
//
//	go run ./cmd/gencluster -services 10000 -endpoints 10 -affinity-every 2 -local-every 4
//
// -affinity-every N gives every Nth Service sessionAffinity: ClientIP;
// -local-every N gives every Nth Service externalTrafficPolicy: Local (a
// ClusterIP Service becomes a NodePort one for it).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nftproxy/nftproxy/proxy/model/synth"
)

func main() {
	spec := synth.Spec{Mixed: true}
	flag.IntVar(&spec.Services, "services", 1000, "number of Services")
	flag.IntVar(&spec.Endpoints, "endpoints", 10, "endpoints per Service")
	out := flag.String("o", "-", "output file (- for stdout)")
	change := flag.Bool("change-endpoint", false, "move Service 0's first endpoint")
	flag.IntVar(&spec.AffinityEvery, "affinity-every", 0, "give every Nth Service ClientIP session affinity (0: none)")
	flag.IntVar(&spec.LocalEvery, "local-every", 0, "give every Nth Service externalTrafficPolicy: Local (0: none)")
	flag.Parse()
	if err := write(*out, spec, *change); err != nil {
		fmt.Fprintln(os.Stderr, "gencluster:", err)
		os.Exit(1)
	}
}

func write(path string, spec synth.Spec, change bool) (err error) {
	f := os.Stdout
	if path != "-" {
		if f, err = os.Create(path); err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
	}
	w := bufio.NewWriterSize(f, 1<<20)
	writeCluster(w, spec, change)
	return w.Flush()
}

// writeCluster writes the Node and the cluster spec describes.
func writeCluster(w io.Writer, spec synth.Spec, change bool) {
	snap := synth.Cluster(spec)
	if change && len(snap.Slices) > 0 && len(snap.Slices[0].Endpoints) > 0 {
		snap.Slices[0].Endpoints[0].Addresses[0] = synth.MovedEndpoint(0)
	}
	fmt.Fprint(w, node)
	for i := range snap.Services {
		writeService(w, &snap.Services[i])
	}
	for i := range snap.Slices {
		writeSlice(w, &snap.Slices[i])
	}
}

var node = fmt.Sprintf(`apiVersion: v1
kind: Node
metadata: {name: %s}
status:
  addresses:
  - {type: InternalIP, address: 198.51.100.1}
`, synth.NodeName)
