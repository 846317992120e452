package kernel

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"

	"github.com/nftproxy/nftproxy/nft"
)

// TestElementMessagesMatchGoogleNftables holds the reason our element
// messages may bypass google/nftables (element_msg.go): they are the
// messages its SetAddElements and SetDeleteElements make of the same
// elements, byte for byte, less the echo flag, for every key and data
// type we program, and split over messages the same way when a list
// exceeds the 64 KiB attribute limit. If this fails, a release changed how
// the library writes elements: check what changed and follow it.
func TestElementMessagesMatchGoogleNftables(t *testing.T) {
	for _, tc := range elementCases() {
		for _, n := range []int{1, 3, 3000} {
			elems := make([]nft.Element, n)
			for i := range elems {
				elems[i] = tc.elem
			}
			for _, del := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/delete=%v", tc.name, n, del), func(t *testing.T) {
					compareElementMessages(t, tc, elems, del)
				})
			}
		}
	}
}

func compareElementMessages(t *testing.T, tc elementCase, elems []nft.Element, del bool) {
	set := newSet(tableOf(tc.f), &tc.set)
	want := marshal(t, func(c *nftables.Conn) error {
		if del {
			return c.SetDeleteElements(set, encodeElements(&tc.set, elems))
		}
		return c.SetAddElements(set, encodeElements(&tc.set, elems))
	})
	typ := uint16(newSetElemType)
	if del {
		typ = delSetElemType
	}
	var w batchWriter
	w.elements(typ, tc.f, &tc.set, elems)
	bufs, _ := w.seal(0, 1)
	got := parseBatch(t, bytes.Join(bufs, nil))
	got = got[1 : len(got)-1]
	if len(got) != len(want) {
		t.Fatalf("%d messages, google/nftables makes %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Header.Type != want[i].Header.Type || got[i].Header.Flags != want[i].Header.Flags&^netlink.Echo {
			t.Errorf("message %d: type %v flags %v, google/nftables: %v %v", i,
				got[i].Header.Type, got[i].Header.Flags, want[i].Header.Type, want[i].Header.Flags)
		}
		if !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("message %d differs from google/nftables':\n%s", i, cmp.Diff(want[i].Data, got[i].Data))
		}
	}
}
