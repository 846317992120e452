package lab

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Proto is a transport protocol a lab server and client speak.
type Proto string

// The protocols a service proxy forwards.
const (
	TCP  Proto = "tcp"
	UDP  Proto = "udp"
	SCTP Proto = "sctp"
)

// Protos lists every protocol, for table-driven tests.
var Protos = []Proto{TCP, UDP, SCTP}

// Serve starts a server for p; see ServeTCP, ServeUDP and ServeSCTP.
func Serve(t testing.TB, p Proto, ns *NS, addr, name string) *Server {
	t.Helper()
	switch p {
	case TCP:
		return ServeTCP(t, ns, addr, name)
	case UDP:
		return ServeUDP(t, ns, addr, name)
	case SCTP:
		return ServeSCTP(t, ns, addr, name)
	}
	t.Fatalf("serve: unknown protocol %q", p)
	return nil
}

// Request sends one request over p to addr ("ip:port", IPv6 in brackets)
// from inside ns and returns the reply, e.g. "pod-0 198.51.100.2".
func (ns *NS) Request(p Proto, addr string, timeout time.Duration) (string, error) {
	return ns.RequestFrom(p, "", addr, timeout)
}

// RequestFrom is Request from a chosen local address src ("ip" or
// "ip:port"; "" lets the kernel choose), e.g. a backend calling its own
// service to test hairpin traffic.
func (ns *NS) RequestFrom(p Proto, src, addr string, timeout time.Duration) (string, error) {
	var reply string
	var err error
	switch p {
	case TCP:
		reply, err = requestTCP(ns, src, addr, timeout)
	case UDP:
		reply, err = requestUDP(ns, src, addr, timeout)
	case SCTP:
		reply, err = requestSCTP(ns, src, addr, timeout)
	default:
		return "", fmt.Errorf("request: unknown protocol %q", p)
	}
	if err != nil {
		return "", fmt.Errorf("%s request from %s to %s: %w", p, ns.Name, addr, err)
	}
	return reply, nil
}

// Reply is a server's answer: who answered and whom it saw.
type Reply struct {
	Name   string     // the server's name, e.g. the backend's
	Source netip.Addr // the client address as the server saw it
}

// ParseReply parses a reply string "<name> <client-ip>".
func ParseReply(s string) (Reply, error) {
	name, src, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return Reply{}, fmt.Errorf("parse reply %q: want \"<name> <ip>\"", s)
	}
	a, err := netip.ParseAddr(src)
	if err != nil {
		return Reply{}, fmt.Errorf("parse reply %q: %w", s, err)
	}
	return Reply{Name: name, Source: a}, nil
}

// formatReply is what servers send: "<name> <client-ip>\n". IPv4-mapped
// addresses are shown as IPv4.
func formatReply(name string, client netip.Addr) []byte {
	return []byte(name + " " + client.Unmap().String() + "\n")
}

// IsTimeout reports whether a request failed because its timeout passed
// (as opposed to being refused or unreachable).
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// IsRefused reports whether a request was refused: a TCP reset, an SCTP
// abort, or an ICMP port unreachable for UDP.
func IsRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// parseAddrPort parses "ip:port".
func parseAddrPort(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: want ip:port: %w", s, err)
	}
	return ap, nil
}

// parseSource parses a local address "ip" or "ip:port"; "" gives the zero
// AddrPort, meaning "let the kernel choose".
func parseSource(s string) (netip.AddrPort, error) {
	if s == "" {
		return netip.AddrPort{}, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a, 0), nil
	}
	return parseAddrPort(s)
}
