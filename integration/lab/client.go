package lab

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// udpResend is how often a UDP request is repeated while no reply came: a
// first datagram can be lost while neighbours are resolved.
const udpResend = 200 * time.Millisecond

// maxReply bounds how much of a reply a client reads.
const maxReply = 4096

// RequestTCP connects to addr from inside ns and reads the reply until the
// server closes. A reset gives ECONNREFUSED.
func (ns *NS) RequestTCP(addr string, timeout time.Duration) (string, error) {
	return ns.Request(TCP, addr, timeout)
}

// RequestUDP sends a datagram to addr from a connected UDP socket inside ns
// and returns the first reply, resending while none came. On a connected
// socket the kernel reports an ICMP port unreachable as ECONNREFUSED.
func (ns *NS) RequestUDP(addr string, timeout time.Duration) (string, error) {
	return ns.Request(UDP, addr, timeout)
}

func requestTCP(ns *NS, src, addr string, timeout time.Duration) (string, error) {
	local, err := parseSource(src)
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(timeout)
	d := net.Dialer{Deadline: deadline}
	if local.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(local)
	}
	var c net.Conn
	err = ns.Do(func() (err error) {
		c, err = d.Dial("tcp", addr)
		return err
	})
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	b, err := io.ReadAll(io.LimitReader(c, maxReply))
	return strings.TrimSpace(string(b)), err
}

func requestUDP(ns *NS, src, addr string, timeout time.Duration) (string, error) {
	local, remote, err := parseEnds(src, addr)
	if err != nil {
		return "", err
	}
	var laddr *net.UDPAddr
	if local.IsValid() {
		laddr = net.UDPAddrFromAddrPort(local)
	}
	var c *net.UDPConn
	err = ns.Do(func() (err error) {
		c, err = net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(remote))
		return err
	})
	if err != nil {
		return "", err
	}
	defer c.Close()
	return exchangeUDP(c, time.Now().Add(timeout))
}

// exchangeUDP sends a request every udpResend until a reply, an error (such
// as ECONNREFUSED) or the deadline.
func exchangeUDP(c *net.UDPConn, deadline time.Time) (string, error) {
	buf := make([]byte, maxReply)
	for {
		if _, err := c.Write([]byte("ping\n")); err != nil {
			return "", err
		}
		wait := time.Now().Add(udpResend)
		if wait.After(deadline) {
			wait = deadline
		}
		_ = c.SetReadDeadline(wait)
		n, err := c.Read(buf)
		if err == nil {
			return strings.TrimSpace(string(buf[:n])), nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(deadline) {
			return "", err
		}
	}
}
