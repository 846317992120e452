package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// topology is the data-plane benchmark's three namespaces:
//
//	client (10.0.1.2, + one source address per case)
//	   | c0 -- n0
//	node (10.0.1.1, 10.0.2.1): forwards, runs the rules under test
//	   | n1 -- b0
//	backend (10.0.2.2): answers on every endpoint address, 10.128.0.0/10
//
// The backend namespace treats the whole endpoint range as local (one
// "local" route), so every endpoint of every synthetic Service accepts
// connections on its target port without one address per endpoint.
type topology struct {
	client, node, backend *netns
	listeners             []int // backend listening sockets
}

var (
	clientAddr  = netip.MustParseAddr("10.0.1.2")
	backendAddr = netip.MustParseAddr("10.0.2.2")
)

func newTopology() (*topology, error) {
	t := &topology{}
	for _, p := range []struct {
		ns   **netns
		name string
	}{{&t.client, "client"}, {&t.node, "node"}, {&t.backend, "backend"}} {
		ns, err := newNetns(p.name)
		if err != nil {
			return nil, errors.Join(err, t.close())
		}
		*p.ns = ns
	}
	if err := t.wire(); err != nil {
		return nil, errors.Join(err, t.close())
	}
	return t, nil
}

// wire creates the links and routes. Every command runs inside one of our
// namespaces: the veth pairs are created there, never in the host's.
func (t *topology) wire() error {
	steps := []struct {
		ns   *netns
		args string
	}{
		{t.client, "ip link add c0 type veth peer name n0 netns " + t.node.name},
		{t.node, "ip link add n1 type veth peer name b0 netns " + t.backend.name},
		{t.client, "ip addr add 10.0.1.2/24 dev c0"},
		{t.client, "ip link set c0 up"},
		{t.client, "ip route add default via 10.0.1.1"},
		{t.node, "ip addr add 10.0.1.1/24 dev n0"},
		{t.node, "ip addr add 10.0.2.1/24 dev n1"},
		{t.node, "ip link set n0 up"},
		{t.node, "ip link set n1 up"},
		{t.node, "sysctl -qw net.ipv4.ip_forward=1"},
		{t.node, "ip route add 10.128.0.0/10 via 10.0.2.2"},
		{t.backend, "ip addr add 10.0.2.2/24 dev b0"},
		{t.backend, "ip link set b0 up"},
		{t.backend, "ip route add default via 10.0.2.1"},
		{t.backend, "ip route add local 10.128.0.0/10 dev lo"},
	}
	for _, s := range steps {
		if _, err := s.ns.exec(10*time.Second, strings.Fields(s.args)...); err != nil {
			return err
		}
	}
	return nil
}

// addClientSource adds another source address to the client: each case
// connects from its own address, so no connection of a case reuses the
// conntrack entry (and its NAT binding) of an earlier one.
func (t *topology) addClientSource(n int) (netip.Addr, error) {
	a := offset(clientAddr, 8+n)
	_, err := t.client.exec(10*time.Second, "ip", "addr", "add", a.String()+"/24", "dev", "c0")
	return a, err
}

// listen opens a TCP listener in the backend namespace on port, on every
// local address, and accepts and closes connections until close.
func (t *topology) listen(port uint16) error {
	var fd int
	err := t.backend.do(func() error {
		var err error
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(port)}); err != nil {
			unix.Close(fd)
			return err
		}
		return unix.Listen(fd, 4096)
	})
	if err != nil {
		return fmt.Errorf("backend listen on %d: %w", port, err)
	}
	t.listeners = append(t.listeners, fd)
	go acceptLoop(fd)
	return nil
}

// acceptLoop ends when the listening socket is shut down.
func acceptLoop(fd int) {
	for {
		nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
		if err == unix.EINTR || err == unix.ECONNABORTED {
			continue
		}
		if err != nil {
			return
		}
		unix.Close(nfd)
	}
}

func (t *topology) close() error {
	for _, fd := range t.listeners {
		_ = unix.Shutdown(fd, unix.SHUT_RDWR)
		unix.Close(fd)
	}
	var errs []error
	for _, ns := range []*netns{t.client, t.node, t.backend} {
		if ns != nil {
			errs = append(errs, ns.remove())
		}
	}
	return errors.Join(errs...)
}
