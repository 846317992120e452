package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nftproxy/nftproxy/integration/e2e"
	"github.com/nftproxy/nftproxy/integration/lab"
)

// httpPort is where the pods serve HTTP.
const httpPort = 80

// demo is the running lab and the addresses to try.
type demo struct {
	env     *e2e.Env
	targets []target
}

// target is one address of one Service.
type target struct {
	service, kind, addr string
}

// setup builds the lab, the API server, the Services and nftproxy, and
// waits until every address answers.
func setup(t testing.TB) *demo {
	fmt.Println("Starting etcd and kube-apiserver in the node namespace, 3 pods with HTTP servers ...")
	env := e2e.New(t, 3)
	d := &demo{env: env}
	pods := env.Lab.Backends
	for _, b := range pods {
		serveHTTP(t, b)
	}
	node := env.Lab.NodeIPv4.String()
	d.add(t, e2e.Service("web", "10.96.0.10", e2e.TCPPort("http", 80, 0)), pods...)
	d.add(t, e2e.Service("shop", "10.96.0.20", e2e.TCPPort("http", 80, 30080)), pods[1], pods[2])
	lb := e2e.LoadBalancer(e2e.Service("api", "10.96.0.30", e2e.TCPPort("http", 80, 30090)))
	d.add(t, lb, pods[0], pods[2])
	env.SetIngress(t, lb, "192.0.2.30")
	d.targets = []target{
		{"web", "ClusterIP", "10.96.0.10:80"},
		{"shop", "NodePort", node + ":30080"},
		{"api", "LoadBalancer", "192.0.2.30:80"},
	}
	fmt.Println("Starting nftproxy in the node namespace ...")
	env.StartProxy(t)
	for _, tg := range d.targets {
		e2e.Eventually(t, tg.service+" answers at "+tg.addr, func() error {
			_, err := d.get(tg.addr)
			return err
		})
	}
	return d
}

// add creates svc (target port httpPort) and its EndpointSlice with pods.
func (d *demo) add(t testing.TB, svc *corev1.Service, pods ...*lab.Backend) {
	svc.Spec.Ports[0].TargetPort = intstr.FromInt32(httpPort)
	var addrs []netip.Addr
	for _, p := range pods {
		addrs = append(addrs, p.IPv4)
	}
	d.env.Create(t, svc)
	d.env.Create(t, httpSlice(e2e.Slice(svc.Name, "http", addrs...)))
}

func httpSlice(s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	port := int32(httpPort)
	s.Ports[0].Port = &port
	return s
}

// serveHTTP runs an HTTP server in the pod that names the pod and the
// client address it saw. It stops at cleanup.
func serveHTTP(t testing.TB, b *lab.Backend) {
	var ln net.Listener
	err := b.Do(func() (err error) {
		ln, err = net.Listen("tcp", lab.AddrPort(b.IPv4, httpPort))
		return err
	})
	if err != nil {
		t.Fatalf("%s: listen: %v", b.Name, err)
	}
	srv := &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "pod%d %s\n", b.Index, r.RemoteAddr)
		}),
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// get sends one HTTP request from the client namespace on a new connection
// and returns the body's first word, the pod's name.
func (d *demo) get(addr string) (string, error) {
	client := &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true, // a new connection, so a new endpoint choice, per request
			DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
				err = d.env.Lab.Client.Do(func() error {
					var dl net.Dialer
					c, err = dl.DialContext(ctx, network, addr)
					return err
				})
				return c, err
			},
		},
	}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil {
		return "", err
	}
	name, _, _ := strings.Cut(string(body), " ")
	return name, nil
}

// report sends the requests, prints their spread and the table.
func (d *demo) report(t testing.TB, requests int) {
	fmt.Printf("\n%d HTTP requests from the external client to each Service:\n\n", requests)
	for _, tg := range d.targets {
		seen := map[string]int{}
		failed := 0
		for range requests {
			name, err := d.get(tg.addr)
			if err != nil {
				failed++
				continue
			}
			seen[name]++
		}
		fmt.Printf("  %-5s %-13s %-20s %s\n", tg.service, tg.kind, tg.addr, spread(seen, failed))
	}
	fmt.Println("\nnft list table ip kube-proxy (in the node namespace):")
	fmt.Println()
	fmt.Print(d.env.Lab.Node.MustExec(t, "nft", "list", "table", "ip", "kube-proxy"))
}

// spread formats counts by pod, sorted, and failures if any.
func spread(seen map[string]int, failed int) string {
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names)+1)
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s: %d", n, seen[n]))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("FAILED: %d", failed))
	}
	return strings.Join(parts, "  ")
}
