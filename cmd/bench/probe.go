package main

import (
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// connectTimeout bounds each connect: a lost SYN is retried by the kernel
// after a second, which would only measure the retry timer.
const connectTimeout = time.Second

// probe opens n TCP connections from src to dst, one after another, from a
// thread in the client namespace, and returns how long each connect took:
// the SYN's way through the node's rules to the backend and the SYN-ACK's
// way back. Each connection uses its own source port (firstPort + i), is
// closed with a reset right away, and leaves no TIME_WAIT behind.
func probe(client *netns, src netip.Addr, dst netip.AddrPort, firstPort, n int) ([]float64, error) {
	out := make([]float64, 0, n)
	err := client.do(func() error {
		failures := 0
		for i := range n {
			d, err := connectOnce(src, firstPort+i, dst)
			if err != nil {
				failures++
				if failures > n/100+1 {
					return fmt.Errorf("connect %s from %s: %w (%d failures)", dst, src, err, failures)
				}
				continue
			}
			out = append(out, d.Seconds())
		}
		return nil
	})
	return out, err
}

func connectOnce(src netip.Addr, port int, dst netip.AddrPort) (time.Duration, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	tv := unix.NsecToTimeval(connectTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return 0, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: src.As4(), Port: port}); err != nil {
		return 0, fmt.Errorf("bind %s:%d: %w", src, port, err)
	}
	sa := &unix.SockaddrInet4{Addr: dst.Addr().As4(), Port: int(dst.Port())}
	start := time.Now()
	err = unix.Connect(fd, sa)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	// A zero linger time closes with a reset: no TIME_WAIT, and conntrack
	// forgets the flow soon.
	_ = unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	return d, nil
}
