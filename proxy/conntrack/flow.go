package conntrack

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/mdlayher/netlink"
)

// ctnetlink attribute types (linux/netfilter/nfnetlink_conntrack.h).
const (
	ctaTupleOrig  = 1
	ctaTupleReply = 2
	ctaZone       = 18

	ctaTupleIP    = 1
	ctaTupleProto = 2

	ctaIPv4Src = 1
	ctaIPv4Dst = 2
	ctaIPv6Src = 3
	ctaIPv6Dst = 4

	ctaProtoNum     = 1
	ctaProtoSrcPort = 2
	ctaProtoDstPort = 3

	protoUDP = 17
)

// Tuple is one direction of a flow.
type Tuple struct{ Src, Dst netip.AddrPort }

// Flow is a conntrack entry: Orig as the client sent it, Reply as the
// endpoint answers (its source is the DNAT target).
type Flow struct {
	Proto uint8
	Orig  Tuple
	Reply Tuple
	Zone  uint16
}

func (f Flow) String() string {
	return fmt.Sprintf("proto %d %s -> %s (reply %s -> %s)", f.Proto, f.Orig.Src, f.Orig.Dst, f.Reply.Src, f.Reply.Dst)
}

// decodeFlow reads a flow from the attributes of a ctnetlink message.
func decodeFlow(b []byte) (Flow, error) {
	var f Flow
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return f, err
	}
	ad.ByteOrder = binary.BigEndian
	for ad.Next() {
		switch ad.Type() {
		case ctaTupleOrig:
			ad.Nested(func(nad *netlink.AttributeDecoder) error { f.Orig, f.Proto = decodeTuple(nad); return nil })
		case ctaTupleReply:
			ad.Nested(func(nad *netlink.AttributeDecoder) error { f.Reply, _ = decodeTuple(nad); return nil })
		case ctaZone:
			f.Zone = ad.Uint16()
		}
	}
	return f, ad.Err()
}

func decodeTuple(ad *netlink.AttributeDecoder) (Tuple, uint8) {
	var src, dst netip.Addr
	var sport, dport uint16
	var proto uint8
	for ad.Next() {
		switch ad.Type() {
		case ctaTupleIP:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					a, _ := netip.AddrFromSlice(nad.Bytes())
					switch nad.Type() {
					case ctaIPv4Src, ctaIPv6Src:
						src = a
					case ctaIPv4Dst, ctaIPv6Dst:
						dst = a
					}
				}
				return nil
			})
		case ctaTupleProto:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				nad.ByteOrder = binary.BigEndian
				for nad.Next() {
					switch nad.Type() {
					case ctaProtoNum:
						proto = nad.Uint8()
					case ctaProtoSrcPort:
						sport = nad.Uint16()
					case ctaProtoDstPort:
						dport = nad.Uint16()
					}
				}
				return nil
			})
		}
	}
	return Tuple{netip.AddrPortFrom(src, sport), netip.AddrPortFrom(dst, dport)}, proto
}

// encodeOrig writes the attributes that name a flow for deletion: its
// original tuple and zone.
func encodeOrig(f Flow) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	ae.Nested(ctaTupleOrig, func(nae *netlink.AttributeEncoder) error {
		nae.Nested(ctaTupleIP, func(ip *netlink.AttributeEncoder) error {
			srcType, dstType := uint16(ctaIPv4Src), uint16(ctaIPv4Dst)
			if f.Orig.Src.Addr().Is6() {
				srcType, dstType = ctaIPv6Src, ctaIPv6Dst
			}
			ip.Bytes(srcType, f.Orig.Src.Addr().AsSlice())
			ip.Bytes(dstType, f.Orig.Dst.Addr().AsSlice())
			return nil
		})
		nae.Nested(ctaTupleProto, func(p *netlink.AttributeEncoder) error {
			p.Uint8(ctaProtoNum, f.Proto)
			p.Uint16(ctaProtoSrcPort, f.Orig.Src.Port())
			p.Uint16(ctaProtoDstPort, f.Orig.Dst.Port())
			return nil
		})
		return nil
	})
	ae.Uint16(ctaZone, f.Zone)
	return ae.Encode()
}
