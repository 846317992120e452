package lab

import (
	"net"
	"sync"
	"testing"
	"time"
)

// answerTimeout bounds how long a server spends answering one client.
const answerTimeout = time.Second

// Server is a running lab server. Every request gets the reply
// "<Name> <client-ip>". It stops at test cleanup, or earlier with Close.
type Server struct {
	Proto Proto
	Addr  string // the listening address, "ip:port"
	Name  string

	stop func() error // closes the listening socket
	done chan struct{}
	once sync.Once
}

// newServer runs serveOne in a loop until it fails, which it does once stop
// has closed the socket, and registers Close as cleanup.
func newServer(t testing.TB, p Proto, addr, name string, stop func() error, serveOne func() error) *Server {
	s := &Server{Proto: p, Addr: addr, Name: name, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for serveOne() == nil {
		}
	}()
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and waits until its goroutine has returned. It is
// safe to call more than once: later requests to Addr are refused.
func (s *Server) Close() {
	s.once.Do(func() {
		_ = s.stop()
		<-s.done
	})
}

// ServeTCP starts a TCP server on addr ("ip:port") inside ns. Each
// connection gets the reply and is closed.
func ServeTCP(t testing.TB, ns *NS, addr, name string) *Server {
	t.Helper()
	var ln net.Listener
	err := ns.Do(func() (err error) {
		ln, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		t.Fatalf("%s: serve tcp: %v", ns.Name, err)
	}
	return newServer(t, TCP, addr, name, ln.Close, func() error {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(answerTimeout))
		_, _ = c.Write(formatReply(name, c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr()))
		return nil
	})
}

// ServeUDP starts a UDP server on addr inside ns that answers each datagram.
// Bind a specific address, not a wildcard: the reply must leave from the
// address the request was sent to for conntrack to undo the NAT.
func ServeUDP(t testing.TB, ns *NS, addr, name string) *Server {
	t.Helper()
	ap, err := parseAddrPort(addr)
	if err != nil {
		t.Fatalf("%s: serve udp: %v", ns.Name, err)
	}
	var c *net.UDPConn
	err = ns.Do(func() (err error) {
		c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap))
		return err
	})
	if err != nil {
		t.Fatalf("%s: serve udp: %v", ns.Name, err)
	}
	buf := make([]byte, 2048)
	return newServer(t, UDP, addr, name, c.Close, func() error {
		_, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return err
		}
		_, _ = c.WriteToUDPAddrPort(formatReply(name, from.Addr()), from)
		return nil
	})
}
