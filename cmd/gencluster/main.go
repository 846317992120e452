// Command gencluster writes a synthetic cluster as Kubernetes manifests:
// one Node, N Services and one EndpointSlice each, for timing
// `nftproxy compile` and `nftproxy apply` at scale.
//
//	go run ./cmd/gencluster -services 10000 -endpoints 10 -o /tmp/cluster.yaml
//
// Service i gets ClusterIP 10.96.0.0/12 + i, port 80 -> 8080, and every
// fourth one is a NodePort. With -change-endpoint the first endpoint of
// Service 0 moves to another address, to time a one-Service change.
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
	flag.Parse()
	if err := write(*out, *services, *endpoints, *change); err != nil {
		fmt.Fprintln(os.Stderr, "gencluster:", err)
		os.Exit(1)
	}
}

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
	if i%4 == 0 && i/4 < 30000-1 {
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
  ports:
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
`, i, typ, ip, ip, nodePort, i, i)
	for j := range endpoints {
		ep := offset(netip.MustParseAddr("10.128.0.0"), i*endpoints+j)
		if change && j == 0 {
			ep = netip.MustParseAddr("10.127.255.254")
		}
		fmt.Fprintf(w, "- addresses: [%s]\n  conditions: {ready: true}\n", ep)
	}
}

// offset returns base + n as an IPv4 address.
func offset(base netip.Addr, n int) netip.Addr {
	b := base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
