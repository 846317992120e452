package lab

import (
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/integration/setns"
)

// ServeSCTP starts an SCTP server (one-to-one style socket) on addr inside
// ns; each association gets the reply and is shut down. It skips the test
// when the kernel has no SCTP, after trying "modprobe sctp".
func ServeSCTP(t testing.TB, ns *NS, addr, name string) *Server {
	t.Helper()
	ap, err := parseAddrPort(addr)
	if err != nil {
		t.Fatalf("%s: serve sctp: %v", ns.Name, err)
	}
	ln, err := listenSCTP(ns, ap)
	if errors.Is(err, unix.EPROTONOSUPPORT) {
		_, _ = setns.Run("modprobe", "sctp") // may be missing or built without SCTP
		ln, err = listenSCTP(ns, ap)
	}
	if errors.Is(err, unix.EPROTONOSUPPORT) {
		t.Skipf("lab: kernel has no SCTP support (CONFIG_IP_SCTP unset or module missing): %v", err)
	}
	if err != nil {
		t.Fatalf("%s: serve sctp: %v", ns.Name, err)
	}
	return serveStream(t, SCTP, ln, addr, name)
}

// RequestSCTP opens an SCTP association to addr from inside ns and reads
// the reply until the server shuts down. An abort gives ECONNREFUSED; a
// kernel without SCTP gives EPROTONOSUPPORT.
func (ns *NS) RequestSCTP(addr string, timeout time.Duration) (string, error) {
	return ns.Request(SCTP, addr, timeout)
}

func listenSCTP(ns *NS, ap netip.AddrPort) (*os.File, error) {
	var ln *os.File
	err := ns.Do(func() (err error) {
		ln, err = listenStream(ap, unix.IPPROTO_SCTP)
		return err
	})
	return ln, err
}

func requestSCTP(ns *NS, src, addr string, timeout time.Duration) (string, error) {
	return requestStreamAddrs(ns, unix.IPPROTO_SCTP, src, addr, timeout)
}

// requestStreamAddrs parses src and addr for requestStream.
func requestStreamAddrs(ns *NS, proto int, src, addr string, timeout time.Duration) (string, error) {
	local, remote, err := parseEnds(src, addr)
	if err != nil {
		return "", err
	}
	return requestStream(ns, proto, local, remote, timeout)
}

// parseEnds parses a request's optional source and its destination.
func parseEnds(src, addr string) (local, remote netip.AddrPort, err error) {
	if local, err = parseSource(src); err != nil {
		return local, remote, err
	}
	remote, err = parseAddrPort(addr)
	return local, remote, err
}

// serveStream answers each connection accepted on ln until ln is closed.
func serveStream(t testing.TB, p Proto, ln *os.File, addr, name string) *Server {
	return newServer(t, p, addr, name, ln.Close, func() error {
		c, client, err := acceptStream(ln)
		if errors.Is(err, unix.ECONNABORTED) {
			return nil // the client gave up before accept; keep serving
		}
		if err != nil {
			return err
		}
		answerStream(c, name, client)
		return nil
	})
}
