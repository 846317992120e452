package lab

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Stream sockets of any protocol (SCTP one-to-one style, which the net
// package lacks) built from raw syscalls. Sockets are non-blocking and
// wrapped in *os.File, which registers them with the Go poller: reads,
// writes and waits honour deadlines and Close wakes blocked callers.

// errInProgress means a non-blocking connect has not finished yet.
var errInProgress = errors.New("connect in progress")

// streamSocket creates a non-blocking stream socket of proto for ap's family.
func streamSocket(ap netip.AddrPort, proto int) (int, error) {
	family := unix.AF_INET6
	if ap.Addr().Is4() {
		family = unix.AF_INET
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	return fd, nil
}

// listenStream creates a listening socket on ap. Call it inside NS.Do.
func listenStream(ap netip.AddrPort, proto int) (*os.File, error) {
	fd, err := streamSocket(ap, proto)
	if err != nil {
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("reuseaddr: %w", err)
	}
	if err := unix.Bind(fd, sockaddr(ap)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind %s: %w", ap, err)
	}
	if err := unix.Listen(fd, 64); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen %s: %w", ap, err)
	}
	return os.NewFile(uintptr(fd), "listen "+ap.String()), nil
}

// acceptStream waits for one connection on ln. It fails once ln is closed.
func acceptStream(ln *os.File) (*os.File, netip.Addr, error) {
	rc, err := ln.SyscallConn()
	if err != nil {
		return nil, netip.Addr{}, err
	}
	var nfd int
	var sa unix.Sockaddr
	var aerr error
	err = rc.Read(func(fd uintptr) bool {
		nfd, sa, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		return aerr != unix.EAGAIN
	})
	if err == nil {
		err = aerr
	}
	if err != nil {
		return nil, netip.Addr{}, fmt.Errorf("accept: %w", err)
	}
	return os.NewFile(uintptr(nfd), "conn"), sockaddrAddr(sa), nil
}

// answerStream writes the reply to c and closes it.
func answerStream(c *os.File, name string, client netip.Addr) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(answerTimeout))
	_, _ = c.Write(formatReply(name, client))
}

// requestStream connects from inside ns to dst (from src if valid) and
// reads the reply until the peer closes.
func requestStream(ns *NS, proto int, src, dst netip.AddrPort, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	var c *os.File
	err := ns.Do(func() (err error) {
		c, err = startConnect(proto, src, dst)
		return err
	})
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(deadline); err != nil {
		return "", err
	}
	if err := waitConnected(c); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, maxReply))
	return strings.TrimSpace(string(b)), err
}

// startConnect creates a socket, binds it to src if valid, and starts a
// non-blocking connect to dst. Call it inside NS.Do.
func startConnect(proto int, src, dst netip.AddrPort) (*os.File, error) {
	fd, err := streamSocket(dst, proto)
	if err != nil {
		return nil, err
	}
	if src.IsValid() {
		if err := unix.Bind(fd, sockaddr(src)); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("bind %s: %w", src, err)
		}
	}
	if err := unix.Connect(fd, sockaddr(dst)); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", dst, err)
	}
	return os.NewFile(uintptr(fd), "conn "+dst.String()), nil
}

// waitConnected waits until c's connect finished, failed, or c's deadline
// passed.
func waitConnected(c *os.File) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	err = rc.Write(func(fd uintptr) bool {
		cerr = connectState(int(fd))
		return cerr != errInProgress
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return nil
}

// connectState reports a pending connect error (SO_ERROR), errInProgress
// while the socket has no peer yet, or nil once it is connected. Checking
// the state on every call, not only after a wake-up, cannot miss a connect
// that completed before the poller started waiting.
func connectState(fd int) error {
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return err
	}
	if soerr != 0 {
		return unix.Errno(soerr)
	}
	if _, err := unix.Getpeername(fd); err != nil {
		if err == unix.ENOTCONN {
			return errInProgress
		}
		return err
	}
	return nil
}

// sockaddr converts ap to a socket address (IPv4 addresses as AF_INET).
func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// sockaddrAddr returns the IP of an AF_INET or AF_INET6 socket address.
func sockaddrAddr(sa unix.Sockaddr) netip.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(sa.Addr)
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(sa.Addr).Unmap()
	}
	return netip.Addr{}
}
