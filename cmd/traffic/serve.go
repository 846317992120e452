package main

import (
	"bufio"
	"context"
	"flag"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

func runServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	tcp := fs.String("tcp", ":8080", "answer each connection with the hostname")
	udp := fs.String("udp", ":8081", "answer each datagram with the hostname")
	echo := fs.String("echo", ":8082", "echo every line of long-lived connections")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := listen(*tcp, *udp, *echo)
	if err != nil {
		return err
	}
	defer s.Close()
	go s.Serve()
	<-ctx.Done()
	return nil
}

// server holds the three listeners of serve.
type server struct {
	name      []byte
	tcp, echo net.Listener
	udp       net.PacketConn

	mu   sync.Mutex
	open map[net.Conn]bool // accepted connections not yet closed
}

func listen(tcp, udp, echo string) (*server, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	s := &server{name: []byte(host + "\n"), open: map[net.Conn]bool{}}
	if s.tcp, err = net.Listen("tcp", tcp); err != nil {
		return nil, err
	}
	if s.echo, err = net.Listen("tcp", echo); err != nil {
		s.Close()
		return nil, err
	}
	if s.udp, err = net.ListenPacket("udp", udp); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Serve answers on every listener until Close.
func (s *server) Serve() {
	go s.serveUDP()
	go s.accept(s.echo, echoLines)
	s.accept(s.tcp, func(c net.Conn) { c.Write(s.name) })
}

func (s *server) Close() {
	for _, c := range []interface{ Close() error }{s.tcp, s.echo, s.udp} {
		if c != nil {
			c.Close()
		}
	}
}

func (s *server) accept(l net.Listener, handle func(net.Conn)) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		s.track(c, true)
		go func() {
			defer s.track(c, false)
			defer c.Close()
			handle(c)
		}()
	}
}

func (s *server) track(c net.Conn, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if open {
		s.open[c] = true
	} else {
		delete(s.open, c)
	}
}

// closeConns closes every accepted connection still open.
func (s *server) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.open {
		c.Close()
	}
}

func echoLines(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		if _, err := c.Write(line); err != nil {
			return
		}
	}
}

func (s *server) serveUDP() {
	buf := make([]byte, 1500)
	for {
		_, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			return
		}
		s.udp.WriteTo(s.name, from)
	}
}
