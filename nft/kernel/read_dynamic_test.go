package kernel

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/google/nftables/userdata"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// TestParseElementExpirationAndComment: an element of a dump keeps the
// time it has left (NFTA_SET_ELEM_EXPIRATION, milliseconds, big endian) and
// its comment (NFTA_SET_ELEM_USERDATA), as the kernel sends them.
func TestParseElementExpirationAndComment(t *testing.T) {
	client := netip.MustParseAddr("10.0.0.1")
	key := append(client.AsSlice(), binary.NativeEndian.AppendUint32(nil, 42)...)
	value, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: unix.NFTA_DATA_VALUE, Data: key}})
	if err != nil {
		t.Fatal(err)
	}
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	ae.Bytes(unix.NFTA_SET_ELEM_KEY|unix.NLA_F_NESTED, value)
	ae.Uint64(unix.NFTA_SET_ELEM_TIMEOUT, 600000)
	ae.Uint64(unix.NFTA_SET_ELEM_EXPIRATION, 552250)
	ae.Bytes(unix.NFTA_SET_ELEM_USERDATA, userdata.AppendString(nil, userdata.NFTNL_UDATA_SET_ELEM_COMMENT, "demo/web:http"))
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	e, err := parseElement(b)
	if err != nil {
		t.Fatal(err)
	}
	if e.Expires != 552250*time.Millisecond || e.Comment != "demo/web:http" {
		t.Errorf("expires %v, comment %q; want 9m12.25s, demo/web:http", e.Expires, e.Comment)
	}
	s := &nft.Set{Key: []nft.DataType{nft.TypeIPv4Addr, nft.TypeInteger}, Dynamic: true}
	if got := s.ElementText(decodeElement(s, e)); got != `10.0.0.1 . 42 comment "demo/web:http"` {
		t.Errorf("element %s", got)
	}
}
