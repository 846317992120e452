package explain

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ParseRequest reads a packet as `nftproxy trace` takes it: dst is IP:PORT
// ([IPv6]:PORT, a port from 1 to 65535), src IP or IP:PORT or "" (a typical
// one for the origin), proto tcp, udp or sctp, from external, pod, node or
// "" (inferred from src). An IPv4-mapped IPv6 address is the IPv4 address.
// Each error is a *RequestError naming the argument at fault.
func ParseRequest(src, dst, proto, from string) (Request, error) {
	var r Request
	d, err := netip.ParseAddrPort(dst)
	if err != nil {
		return r, requestErr("dst", "%q: want IP:PORT ([IPv6]:PORT) with a port from 1 to 65535", dst)
	}
	if d.Port() == 0 {
		return r, requestErr("dst", "%q: port 0 is no Service port", dst)
	}
	r.Dst = netip.AddrPortFrom(d.Addr().Unmap(), d.Port())
	var ok bool
	if r.Proto, ok = ProtoNumber(proto); !ok {
		return r, requestErr("proto", "want tcp, udp or sctp, got %q", proto)
	}
	if r.From, ok = ParseOrigin(from); from != "" && !ok {
		return r, requestErr("from", "want external, pod or node, got %q", from)
	}
	if src != "" {
		if r.Src, r.SrcPort, err = parseSource(src); err != nil {
			return r, requestErr("src", "%q: %v", src, err)
		}
	}
	return r, nil
}

func requestErr(flag, format string, args ...any) error {
	return &RequestError{Flag: flag, Err: fmt.Errorf(format, args...)}
}

// parseSource reads IP or IP:PORT ([IPv6]:PORT).
func parseSource(s string) (netip.Addr, uint16, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), 0, nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		if i := strings.LastIndex(s, ":"); i > 0 && !strings.Contains(s[:i], ":") {
			if _, perr := strconv.ParseUint(s[i+1:], 10, 16); perr != nil {
				return netip.Addr{}, 0, errors.New("port out of range (1 to 65535)")
			}
		}
		return netip.Addr{}, 0, errors.New("want IP or IP:PORT ([IPv6]:PORT)")
	}
	return ap.Addr().Unmap(), ap.Port(), nil
}
