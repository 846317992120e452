package kernel

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Our rule messages must say what google/nftables makes of encodeRule's
// expressions, less the echo flag and the rule ID: same header type, same
// table, chain, expressions and user data, byte for byte. The rule is
// written twice, since the second time its repeated statements come from
// the writer's cache.
func TestRuleMessageMatchesGoogleNftables(t *testing.T) {
	rule := nft.Rule{Comment: "hi", Stmts: []nft.Stmt{
		nft.MatchNew{},
		nft.Random{Mod: 3, Below: 1},
		nft.DNAT{Proto: unix.IPPROTO_TCP, Addr: netip.MustParseAddr("10.180.0.1"), Port: 8080},
		nft.GotoChain("service-ns/web/tcp/http"),
	}}
	for _, f := range []nft.Family{nft.IPv4, nft.IPv6} {
		if f == nft.IPv6 {
			rule.Stmts[2] = nft.DNAT{Proto: unix.IPPROTO_TCP, Addr: netip.MustParseAddr("fd00::1"), Port: 8080}
		}
		want := googleRule(t, f, "services", rule)
		var w batchWriter
		for range 2 {
			if err := w.rule(f, "services", rule); err != nil {
				t.Fatal(err)
			}
		}
		bufs, _ := w.seal(0, 1)
		for _, got := range parseBatch(t, bytes.Join(bufs, nil))[1:3] {
			if got.Header.Type != want.Header.Type {
				t.Errorf("%s: type %v, want %v", f, got.Header.Type, want.Header.Type)
			}
			if wantFlags := want.Header.Flags &^ netlink.Echo; got.Header.Flags != wantFlags {
				t.Errorf("%s: flags %v, want %v", f, got.Header.Flags, wantFlags)
			}
			if diff := cmp.Diff(attrsWithout(t, want.Data, unix.NFTA_RULE_ID), attrsWithout(t, got.Data, unix.NFTA_RULE_ID)); diff != "" {
				t.Errorf("%s: attributes (-google +ours):\n%s", f, diff)
			}
		}
	}
}

// googleRule is the message google/nftables' AddRule sends for r.
func googleRule(t *testing.T, f nft.Family, chain string, r nft.Rule) netlink.Message {
	t.Helper()
	exprs, ud, err := encodeRule(f, r)
	if err != nil {
		t.Fatal(err)
	}
	var c capture
	conn, err := newMarshaller(&c)
	if err != nil {
		t.Fatal(err)
	}
	tbl := tableOf(f)
	conn.AddRule(&nftables.Rule{Table: tbl, Chain: &nftables.Chain{Name: chain, Table: tbl}, Exprs: exprs, UserData: ud})
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	msgs := c.take()
	if len(msgs) != 3 {
		t.Fatalf("google/nftables sent %d messages, want begin, rule, end", len(msgs))
	}
	return msgs[1]
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
func parseBatch(t testing.TB, b []byte) []netlink.Message {
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

// encodeRule returns the expressions and user data (the comment) of r.
func encodeRule(f nft.Family, r nft.Rule) ([]expr.Any, []byte, error) {
	var out []expr.Any
	for _, s := range r.Stmts {
		exprs, err := encodeStmt(f, s)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, exprs...)
	}
	var ud []byte
	if r.Comment != "" {
		ud = userdata.AppendString(nil, userdata.TypeComment, r.Comment)
	}
	return out, ud, nil
}

// A batch after a reset reuses the first chunk of the one before, and
// holds only its own messages.
func TestBatchAfterResetReusesItsChunk(t *testing.T) {
	var w batchWriter
	w.message(unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_NEWTABLE, unix.NLM_F_REQUEST, []byte{2, 0, 0, 0, 1})
	w.message(unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_NEWCHAIN, unix.NLM_F_REQUEST, make([]byte, 40))
	first, _ := w.seal(0, 1)
	chunk := &first[1][0]
	w.reset()
	w.message(unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_DELTABLE, unix.NLM_F_REQUEST, []byte{2, 0, 0, 0})
	bufs, _ := w.seal(0, 10)
	if &bufs[1][0] != chunk {
		t.Error("the second batch did not reuse the first one's chunk")
	}
	msgs := parseBatch(t, bytes.Join(bufs, nil))
	if len(msgs) != 3 || msgs[1].Header.Type != unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_DELTABLE {
		t.Errorf("second batch holds %d messages, want begin, its one delete, end", len(msgs))
	}
}
