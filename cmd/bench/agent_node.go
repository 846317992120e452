package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/nftproxy/nftproxy/integration/lab"
	"github.com/nftproxy/nftproxy/nft/kernel"
)

// node is one proxy's node: a network namespace of its own, created for
// one run of one proxy and removed after it, so that each proxy starts
// with no table, and kube-proxy's table and ours (both `table ip
// kube-proxy`) never meet. Inside it, 127.0.0.1:6443 forwards to the API
// server's namespace, so the kubeconfig the API server wrote works
// unchanged; the node address is on a veth link whose
// peer is in the same namespace (no packet leaves it).
type node struct {
	ns *netns
	k  *kernel.Kernel // reads the node's table (GetElement)
	fd int

	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newNode(apiNS *lab.NS) (*node, error) {
	ns, err := newNetns("node")
	if err != nil {
		return nil, err
	}
	n := &node{ns: ns, fd: -1}
	err = ns.run([]string{
		"ip link add node0 type veth peer name node1",
		"ip addr add " + nodeIPv4.String() + "/24 dev node0",
		"ip link set node0 up",
		"ip link set node1 up",
	})
	if err == nil {
		err = n.forward(apiNS)
	}
	if err == nil {
		n.fd, err = ns.open()
	}
	if err == nil {
		n.k, err = kernel.Open(n.fd)
	}
	if err != nil {
		return nil, errors.Join(err, n.close())
	}
	return n, nil
}

// forward listens on the node's 127.0.0.1:6443 and copies each connection
// to and from the API server's, dialed inside its namespace.
func (n *node) forward(apiNS *lab.NS) error {
	err := n.ns.do(func() (err error) {
		n.ln, err = net.Listen("tcp", "127.0.0.1:6443")
		return err
	})
	if err != nil {
		return fmt.Errorf("listen for the API server: %w", err)
	}
	n.wg.Go(func() {
		for {
			c, err := n.ln.Accept()
			if err != nil {
				return
			}
			n.wg.Go(func() { n.pipe(c, apiNS) })
		}
	})
	return nil
}

func (n *node) pipe(c net.Conn, apiNS *lab.NS) {
	up, err := apiNS.DialContext(context.Background(), "tcp", "127.0.0.1:6443")
	if err != nil {
		c.Close()
		return
	}
	n.mu.Lock()
	n.conns = append(n.conns, c, up)
	n.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(up, c); _ = up.(*net.TCPConn).CloseWrite() })
	_, _ = io.Copy(c, up)
	_ = c.(*net.TCPConn).CloseWrite()
	wg.Wait()
	c.Close()
	up.Close()
}

// close stops forwarding and removes the namespace (and the table in it).
func (n *node) close() error {
	if n.ln != nil {
		n.ln.Close()
	}
	n.mu.Lock()
	for _, c := range n.conns {
		c.Close()
	}
	n.mu.Unlock()
	n.wg.Wait()
	if n.k != nil {
		n.k.Close()
	}
	if n.fd >= 0 {
		syscall.Close(n.fd)
	}
	return n.ns.remove()
}
