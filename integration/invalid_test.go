//go:build integration

package integration

import (
	"encoding/binary"
	"net/netip"
	"syscall"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// sendInvalid sends, from ns, one TCP segment from src to dst:port that
// conntrack marks invalid wherever it sees it: SYN and FIN together, a set
// of flags no connection has. It goes out of a raw socket, since no
// socket API sends such a segment; the kernel adds the IPv4 header.
func sendInvalid(ns *lab.NS, src, dst netip.Addr, port uint16) error {
	seg := invalidSegment(src, dst, port)
	return ns.Do(func() error {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_TCP)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		return syscall.Sendto(fd, seg, 0, &syscall.SockaddrInet4{Addr: dst.As4()})
	})
}

// invalidSegment is a 20-byte TCP header with SYN and FIN set and a correct
// checksum, so that conntrack judges the flags and not the checksum.
func invalidSegment(src, dst netip.Addr, port uint16) []byte {
	const synFin = 0x03
	seg := make([]byte, 20)
	binary.BigEndian.PutUint16(seg[0:], 40000) // source port
	binary.BigEndian.PutUint16(seg[2:], port)
	binary.BigEndian.PutUint32(seg[4:], 1) // sequence number
	seg[12] = 5 << 4                       // data offset: 5 words, no options
	seg[13] = synFin
	binary.BigEndian.PutUint16(seg[14:], 65535) // window
	binary.BigEndian.PutUint16(seg[16:], tcpChecksum(src, dst, seg))
	return seg
}

// tcpChecksum is the Internet checksum of the IPv4 pseudo-header and seg.
func tcpChecksum(src, dst netip.Addr, seg []byte) uint16 {
	s4, d4 := src.As4(), dst.As4()
	pseudo := append(append(append([]byte{}, s4[:]...), d4[:]...), 0, syscall.IPPROTO_TCP, 0, byte(len(seg)))
	var sum uint32
	for _, b := range [][]byte{pseudo, seg} {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(b[i:]))
		}
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}
