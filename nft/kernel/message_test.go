package kernel

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Our rule messages must say what google/nftables' say, less the echo
// flag and the rule ID: same header type, same table, chain, expressions
// and user data, byte for byte.
func TestRuleMessageMatchesGoogleNftables(t *testing.T) {
	tbl := &nftables.Table{Name: "kube-proxy", Family: nftables.TableFamilyIPv4}
	exprs := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Verdict{Kind: expr.VerdictGoto, Chain: "service-ns/web/tcp/http"},
	}
	ud := []byte{0, 3, 'h', 'i', 0}

	var c capture
	conn, err := newMarshaller(&c)
	if err != nil {
		t.Fatal(err)
	}
	conn.AddRule(&nftables.Rule{Table: tbl, Chain: &nftables.Chain{Name: "services", Table: tbl}, Exprs: exprs, UserData: ud})
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	msgs := c.take()
	if len(msgs) != 3 {
		t.Fatalf("google/nftables sent %d messages, want begin, rule, end", len(msgs))
	}
	want := msgs[1]

	var w batchWriter
	if err := w.rule(byte(tbl.Family), tbl.Name, "services", exprs, ud); err != nil {
		t.Fatal(err)
	}
	bufs, _ := w.seal(0, 1)
	got := parseBatch(t, bytes.Join(bufs, nil))[1]

	if got.Header.Type != want.Header.Type {
		t.Errorf("type %v, want %v", got.Header.Type, want.Header.Type)
	}
	if wantFlags := want.Header.Flags &^ netlink.Echo; got.Header.Flags != wantFlags {
		t.Errorf("flags %v, want %v", got.Header.Flags, wantFlags)
	}
	if diff := cmp.Diff(attrsWithout(t, want.Data, unix.NFTA_RULE_ID), attrsWithout(t, got.Data, unix.NFTA_RULE_ID)); diff != "" {
		t.Errorf("attributes (-google +ours):\n%s", diff)
	}
}

// A sealed batch is begin, the messages in order, end: numbered from the
// first sequence number on, each length-prefixed and 4-byte aligned, and
// the generation in the begin message when one is given.
func TestSealNumbersAndFramesTheBatch(t *testing.T) {
	var w batchWriter
	w.message(unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_NEWTABLE, unix.NLM_F_REQUEST, []byte{2, 0, 0, 0, 1})
	for range 3000 { // more than one chunk
		w.message(unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_NEWCHAIN, unix.NLM_F_REQUEST, make([]byte, 400))
	}
	bufs, first := w.seal(7, 100)
	if len(bufs) < 4 {
		t.Fatalf("%d buffers, want begin, at least two chunks, end", len(bufs))
	}
	msgs := parseBatch(t, bytes.Join(bufs, nil))
	if len(msgs) != 3003 {
		t.Fatalf("%d messages, want 3003", len(msgs))
	}
	for i, m := range msgs {
		if m.Header.Sequence != first+uint32(i) {
			t.Fatalf("message %d: sequence %d, want %d", i, m.Header.Sequence, first+uint32(i))
		}
	}
	if msgs[0].Header.Type != unix.NFNL_MSG_BATCH_BEGIN || msgs[3002].Header.Type != unix.NFNL_MSG_BATCH_END {
		t.Errorf("batch framed by %v and %v", msgs[0].Header.Type, msgs[3002].Header.Type)
	}
	gen := attrsWithout(t, msgs[0].Data, 0)[unix.NFNL_BATCH_GENID]
	if len(gen) != 4 || binary.BigEndian.Uint32(gen) != 7 {
		t.Errorf("generation attribute %v, want 7", gen)
	}
}

// parseBatch splits a sealed batch with the netlink library's own parser.
func parseBatch(t *testing.T, b []byte) []netlink.Message {
	t.Helper()
	var out []netlink.Message
	for len(b) > 0 {
		n := int(binary.NativeEndian.Uint32(b))
		if n < unix.NLMSG_HDRLEN || n > len(b) || n%4 != 0 {
			t.Fatalf("bad message length %d with %d bytes left", n, len(b))
		}
		var m netlink.Message
		if err := m.UnmarshalBinary(b[:n]); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
		b = b[n:]
	}
	return out
}

// attrsWithout decodes the attributes after struct nfgenmsg, by type,
// leaving out skip.
func attrsWithout(t *testing.T, data []byte, skip uint16) map[uint16][]byte {
	t.Helper()
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint16][]byte{}
	for ad.Next() {
		if ad.Type() != skip {
			out[ad.Type()] = ad.Bytes()
		}
	}
	if err := ad.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
