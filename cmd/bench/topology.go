package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// topology is the data-plane benchmark's namespaces: one backend, and one
// client and node namespace per case, so that every case's rules stay
// loaded and the cases can be measured in alternation:
//
//	client i (10.1.i.2) -- c0/n0 -- node i (10.1.i.1, 10.2.i.1) -- n1/b<i> -- backend (10.2.i.2)
//
// Node i forwards and holds case i's rules. The backend treats the whole
// endpoint range, 10.128.0.0/10, as local (one "local" route), so every
// endpoint of every synthetic Service accepts connections on its target
// port without one address per endpoint; it routes each client's replies
// back through that client's node.
type topology struct {
	backend   *netns
	paths     []*path
	listeners []int // backend listening sockets
}

// path is one case's client and node.
type path struct {
	client, node *netns
	src          netip.Addr // the client's address
	nodeIP       netip.Addr // the node's address on the client's side
}

func newTopology(n int) (*topology, error) {
	if n > 200 {
		return nil, errors.New("at most 200 cases")
	}
	t := &topology{}
	var err error
	if t.backend, err = newNetns("backend"); err != nil {
		return nil, err
	}
	steps := []string{"ip route add local 10.128.0.0/10 dev lo"}
	if err := t.backend.run(steps); err != nil {
		return nil, errors.Join(err, t.close())
	}
	for i := range n {
		p, err := t.addPath(i)
		if err != nil {
			return nil, errors.Join(err, t.close())
		}
		t.paths = append(t.paths, p)
	}
	return t, nil
}

// addPath creates client i and node i and wires them to the backend. Every
// command runs inside one of our namespaces: the veth pairs are created
// there, never in the host's.
func (t *topology) addPath(i int) (*path, error) {
	p := &path{src: netip.AddrFrom4([4]byte{10, 1, byte(i), 2}), nodeIP: netip.AddrFrom4([4]byte{10, 1, byte(i), 1})}
	var err error
	if p.client, err = newNetns(fmt.Sprintf("client%d", i)); err != nil {
		return nil, err
	}
	if p.node, err = newNetns(fmt.Sprintf("node%d", i)); err != nil {
		return nil, errors.Join(err, p.client.remove())
	}
	b := fmt.Sprintf("b%d", i)
	err = errors.Join(
		p.client.run([]string{
			"ip link add c0 type veth peer name n0 netns " + p.node.name,
			fmt.Sprintf("ip addr add 10.1.%d.2/24 dev c0", i),
			"ip link set c0 up",
			fmt.Sprintf("ip route add default via 10.1.%d.1", i),
		}),
		p.node.run([]string{
			"ip link add n1 type veth peer name " + b + " netns " + t.backend.name,
			fmt.Sprintf("ip addr add 10.1.%d.1/24 dev n0", i),
			fmt.Sprintf("ip addr add 10.2.%d.1/24 dev n1", i),
			"ip link set n0 up",
			"ip link set n1 up",
			"sysctl -qw net.ipv4.ip_forward=1",
			fmt.Sprintf("ip route add 10.128.0.0/10 via 10.2.%d.2", i),
		}),
		t.backend.run([]string{
			fmt.Sprintf("ip addr add 10.2.%d.2/24 dev %s", i, b),
			"ip link set " + b + " up",
			fmt.Sprintf("ip route add 10.1.%d.0/24 via 10.2.%d.1", i, i),
		}))
	if err != nil {
		return nil, errors.Join(err, p.client.remove(), p.node.remove())
	}
	return p, nil
}

// run runs commands (split on spaces) in the namespace, stopping at the
// first error.
func (ns *netns) run(cmds []string) error {
	for _, c := range cmds {
		if _, err := ns.exec(10*time.Second, strings.Fields(c)...); err != nil {
			return err
		}
	}
	return nil
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
	for _, p := range t.paths {
		errs = append(errs, p.client.remove(), p.node.remove())
	}
	if t.backend != nil {
		errs = append(errs, t.backend.remove())
	}
	return errors.Join(errs...)
}
