//go:build integration

package lab

import (
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const timeout = 2 * time.Second

// family picks one address family of the cluster.
type family struct {
	name    string
	client  func(*Cluster) netip.Addr
	pod     func(*Backend) netip.Addr
	missing string // on backend 0's link, but nobody has it: packets vanish
}

var families = []family{{
	name:    "ipv4",
	client:  func(c *Cluster) netip.Addr { return c.ClientIPv4 },
	pod:     func(b *Backend) netip.Addr { return b.IPv4 },
	missing: "10.244.1.99:80",
}, {
	name:    "ipv6",
	client:  func(c *Cluster) netip.Addr { return c.ClientIPv6 },
	pod:     func(b *Backend) netip.Addr { return b.IPv6 },
	missing: "[fd00:10:244:1::99]:80",
}}

// TestClusterDirect checks that the client reaches every backend through the
// node, over every protocol and family, and that servers see the client's
// own address (no proxy, so no NAT).
func TestClusterDirect(t *testing.T) {
	c := NewCluster(t, 2)
	for _, p := range Protos {
		t.Run(string(p), func(t *testing.T) {
			for _, b := range c.Backends {
				Serve(t, p, b.NS, AddrPort(b.IPv4, 8080), b.Name)
				Serve(t, p, b.NS, AddrPort(b.IPv6, 8080), b.Name)
			}
			for _, f := range families {
				for _, b := range c.Backends {
					got := mustRequest(t, c.Client, p, "", AddrPort(f.pod(b), 8080))
					want := Reply{Name: b.Name, Source: f.client(c)}
					if got != want {
						t.Errorf("%s %s to %s: got %+v, want %+v", p, f.name, b.Name, got, want)
					}
				}
			}
		})
	}
}

// TestAddBackendAndRequestFrom checks a backend added later, and a request
// from a chosen source address between pods.
func TestAddBackendAndRequestFrom(t *testing.T) {
	c := NewCluster(t, 1)
	b := c.AddBackend(t)
	for _, f := range families {
		ServeTCP(t, b.NS, AddrPort(f.pod(b), 80), b.Name)
		from := c.Backends[0]
		got := mustRequest(t, from.NS, TCP, f.pod(from).String(), AddrPort(f.pod(b), 80))
		if want := (Reply{Name: b.Name, Source: f.pod(from)}); got != want {
			t.Errorf("%s: got %+v, want %+v", f.name, got, want)
		}
	}
}

// TestErrors checks that callers can tell refused from timed out.
func TestErrors(t *testing.T) {
	c := NewCluster(t, 1)
	b := c.Backends[0]
	for _, p := range []Proto{TCP, UDP} {
		for _, f := range families {
			_, err := c.Client.Request(p, AddrPort(f.pod(b), 9), timeout)
			if !IsRefused(err) || IsTimeout(err) {
				t.Errorf("%s %s to a closed port: err = %v, want ECONNREFUSED", p, f.name, err)
			}
			_, err = c.Client.Request(p, f.missing, 300*time.Millisecond)
			if !IsTimeout(err) || IsRefused(err) {
				t.Errorf("%s %s to a missing host: err = %v, want a timeout", p, f.name, err)
			}
		}
	}
	srv := ServeUDP(t, b.NS, AddrPort(b.IPv4, 53), b.Name)
	mustRequest(t, c.Client, UDP, "", srv.Addr)
	srv.Close()
	if _, err := c.Client.RequestUDP(srv.Addr, timeout); !IsRefused(err) {
		t.Errorf("udp after Close: err = %v, want ECONNREFUSED", err)
	}
}

// TestStreamSockets runs the raw-socket code behind SCTP over TCP, which
// every kernel has, so it is tested even where SCTP is missing.
func TestStreamSockets(t *testing.T) {
	c := NewCluster(t, 1)
	b := c.Backends[0]
	for _, f := range families {
		addr := AddrPort(f.pod(b), 7000)
		ln := mustListenStream(t, b.NS, addr)
		srv := serveStream(t, TCP, ln, addr, b.Name)
		got, err := requestStreamAddrs(c.Client, unix.IPPROTO_TCP, "", addr, timeout)
		if want := fmt.Sprintf("%s %s", b.Name, f.client(c)); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", f.name, got, err, want)
		}
		srv.Close()
		_, err = requestStreamAddrs(c.Client, unix.IPPROTO_TCP, "", addr, timeout)
		if !IsRefused(err) {
			t.Errorf("%s after Close: err = %v, want ECONNREFUSED", f.name, err)
		}
		_, err = requestStreamAddrs(c.Client, unix.IPPROTO_TCP, "", f.missing, 300*time.Millisecond)
		if !IsTimeout(err) {
			t.Errorf("%s to a missing host: err = %v, want a timeout", f.name, err)
		}
	}
}

func mustListenStream(t *testing.T, ns *NS, addr string) *os.File {
	t.Helper()
	ap, err := parseAddrPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	var ln *os.File
	if err := ns.Do(func() (err error) { ln, err = listenStream(ap, unix.IPPROTO_TCP); return err }); err != nil {
		t.Fatal(err)
	}
	return ln
}

// mustRequest sends one request and parses the reply.
func mustRequest(t *testing.T, ns *NS, p Proto, src, addr string) Reply {
	t.Helper()
	s, err := ns.RequestFrom(p, src, addr, timeout)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	r, err := ParseReply(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
