// Command gencluster writes a synthetic cluster as Kubernetes manifests:
// one Node, N Services and one EndpointSlice each, for timing
// `nftproxy compile` and `nftproxy apply` at scale.
//
//	go run ./cmd/gencluster -services 10000 -endpoints 10 -o /tmp/cluster.yaml
//
// Service i gets ClusterIP 10.96.0.0/12 + i, port 80 -> 8080, and every
// fourth one is a NodePort. With -change-endpoint the first endpoint of
// Service 0 moves to another address, to time a one-Service change.
//
// Feature mixes (issue 4's benchmark: half with session affinity, a quarter
// with externalTrafficPolicy: Local):
//
//	go run ./cmd/gencluster -services 10000 -endpoints 10 -affinity-every 2 -local-every 4
//
// -affinity-every N gives every Nth Service sessionAffinity: ClientIP;
// -local-every N makes every Nth Service a NodePort Service with
// externalTrafficPolicy: Local, and places each Service's first endpoint on
// the node (node-1) and the others on node-2.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/netip"
	"os"
)

func main() {
	services := flag.Int("services", 1000, "number of Services")
	endpoints := flag.Int("endpoints", 10, "endpoints per Service")
	out := flag.String("o", "-", "output file (- for stdout)")
	change := flag.Bool("change-endpoint", false, "move Service 0's first endpoint")
	flag.IntVar(&mix.affinityEvery, "affinity-every", 0, "give every Nth Service ClientIP session affinity (0: none)")
	flag.IntVar(&mix.localEvery, "local-every", 0, "give every Nth Service externalTrafficPolicy: Local (0: none)")
	flag.Parse()
	if err := write(*out, *services, *endpoints, *change); err != nil {
		fmt.Fprintln(os.Stderr, "gencluster:", err)
		os.Exit(1)
	}
}

// mix says which Services get which features.
var mix struct{ affinityEvery, localEvery int }

func every(n, i int) bool { return n > 0 && i%n == 0 }

func write(path string, services, endpoints int, change bool) error {
	f := os.Stdout
	if path != "-" {
		var err error
		if f, err = os.Create(path); err != nil {
			return err
		}
		defer f.Close()
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, node)
	for i := range services {
		writeService(w, i, endpoints, change && i == 0)
	}
	return w.Flush()
}

const node = `apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  addresses:
  - {type: InternalIP, address: 198.51.100.1}
`

func writeService(w *bufio.Writer, i, endpoints int, change bool) {
	ip := offset(netip.MustParseAddr("10.96.0.0"), i)
	typ, nodePort := "ClusterIP", ""
	local := every(mix.localEvery, i)
	if (i%4 == 0 || local) && i/4 < 30000-1 {
		typ, nodePort = "NodePort", fmt.Sprintf(", nodePort: %d", 30000+(i/4)%2767)
	}
	fmt.Fprintf(w, `---
apiVersion: v1
kind: Service
metadata: {name: svc-%d, namespace: bench}
spec:
  type: %s
  clusterIP: %s
  clusterIPs: [%s]
%s  ports:
  - {name: http, protocol: TCP, port: 80, targetPort: 8080%s}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: svc-%d-1
  namespace: bench
  labels: {kubernetes.io/service-name: svc-%d}
addressType: IPv4
ports:
- {name: http, protocol: TCP, port: 8080}
endpoints:
`, i, typ, ip, ip, features(i, local), nodePort, i, i)
	for j := range endpoints {
		ep := offset(netip.MustParseAddr("10.128.0.0"), i*endpoints+j)
		if change && j == 0 {
			ep = netip.MustParseAddr("10.127.255.254")
		}
		fmt.Fprintf(w, "- addresses: [%s]\n  conditions: {ready: true}\n", ep)
		if mix.localEvery > 0 {
			fmt.Fprintf(w, "  nodeName: node-%d\n", min(j, 1)+1)
		}
	}
}

// features returns the spec lines of Service i's traffic features.
func features(i int, local bool) string {
	out := ""
	if every(mix.affinityEvery, i) {
		out += "  sessionAffinity: ClientIP\n"
	}
	if local {
		out += "  externalTrafficPolicy: Local\n"
	}
	return out
}

// offset returns base + n as an IPv4 address.
func offset(base netip.Addr, n int) netip.Addr {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
