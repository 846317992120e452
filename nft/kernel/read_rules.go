package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"

	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// readRules returns the rules of the named chains of our table in family
// f, by chain name, with one dump per chain on one socket. A table-wide dump
// (only the table named) is quadratic: every part of a dump re-walks the
// table's rules from the start to find where the previous part stopped
// (kernel 6.18), so 170,000 rules (10,000 Services x 10 endpoints, half with
// session affinity) took 24-26 s on an idle machine; a chain's dump only
// walks that chain (the kernel looks it up by name).
func (k *Kernel) readRules(f nft.Family, chains []string) (map[string][]nft.Rule, error) {
	fam := byte(tableOf(f).Family)
	conn, err := k.dialDump()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rules := make(map[string][]nft.Rule, len(chains))
	for _, name := range chains {
		err := dumpOn(conn, unix.NFT_MSG_GETRULE, fam, []netlink.Attribute{
			{Type: unix.NFTA_RULE_TABLE, Data: []byte(nft.TableName + "\x00")},
			{Type: unix.NFTA_RULE_CHAIN, Data: []byte(name + "\x00")},
		}, func(b []byte) error {
			chain, exprs, ud, err := parseRule(fam, b)
			if err != nil {
				return fmt.Errorf("decode rule: %w", err)
			}
			rules[chain] = append(rules[chain], decodeRule(f, exprs, ud))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("dump rules of chain %s: %w", name, err)
		}
	}
	return rules, nil
}

// dump runs one nftables dump request on a socket of its own (see dumpOn).
func (k *Kernel) dump(msgType int, fam byte, attrs []netlink.Attribute, fn func(data []byte) error) error {
	conn, err := k.dialDump()
	if err != nil {
		return err
	}
	defer conn.Close()
	return dumpOn(conn, msgType, fam, attrs, fn)
}

// dialDump opens a socket for dumps, so that they never interleave with
// the lasting connection's batches, with large receive buffers (see
// dumpBuffer).
func (k *Kernel) dialDump() (*netlink.Conn, error) {
	if k.isClosed() {
		return nil, net.ErrClosed
	}
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: k.netNS(), MessageBufferSize: dumpBuffer})
	if err != nil {
		return nil, fmt.Errorf("dial netlink: %w", err)
	}
	return conn, nil
}

// dumpOn runs one dump request on conn and hands each message's payload to
// fn as its part of the dump arrives: a dump never holds all its messages
// at once.
func dumpOn(conn *netlink.Conn, msgType int, fam byte, attrs []netlink.Attribute, fn func(data []byte) error) error {
	data, err := netlink.MarshalAttributes(attrs)
	if err != nil {
		return err
	}
	_, err = conn.Send(netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | msgType),
			Flags: netlink.Request | netlink.Dump,
		},
		Data: append([]byte{fam, unix.NFNETLINK_V0, 0, 0}, data...),
	})
	if err != nil {
		return err
	}
	for m, err := range conn.ReceiveIter() {
		if err == nil {
			err = fn(m.Data)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dumpBuffer is the receive buffer for dumps. The kernel sizes each part of
// a dump to the largest buffer the reader has used (up to 32 KiB); the
// library's default, a buffer sized to each message, keeps parts at one
// page. Every part of a dump re-walks what it dumps from the start to find
// where the previous part stopped (kernel 6.18), so fewer, larger parts
// matter: a table-wide dump of 130,000 rules took 10.5 s with one-page parts
// and 1.4 s with these (per-chain dumps, readRules, avoid the re-walk of the
// whole table altogether).
const dumpBuffer = 64 << 10

// netNS is the namespace file descriptor for netlink.Config: 0 means the
// process's own.
func (k *Kernel) netNS() int {
	if k.nsFD < 0 {
		return 0
	}
	return k.nsFD
}

// parseRule decodes one NFT_MSG_NEWRULE message of a dump. Attributes are
// walked in place (walkAttrs): a table-wide dump has about 600,000
// expressions, and a decoder per attribute list with copies of every
// payload was a third of what a read allocated.
func parseRule(fam byte, b []byte) (chain string, exprs []expr.Any, ud []byte, err error) {
	if len(b) < 4 {
		return "", nil, nil, fmt.Errorf("short message (%d bytes)", len(b))
	}
	err = walkAttrs(b[4:], func(typ uint16, data []byte) error { // after struct nfgenmsg
		switch typ {
		case unix.NFTA_RULE_CHAIN:
			chain = attrString(data)
		case unix.NFTA_RULE_USERDATA:
			ud = data
		case unix.NFTA_RULE_EXPRESSIONS:
			return walkAttrs(data, func(_ uint16, elem []byte) error {
				e, err := parseExpr(fam, elem)
				if err == nil {
					exprs = append(exprs, e)
				}
				return err
			})
		}
		return nil
	})
	return chain, exprs, ud, err
}

// parseExpr decodes one NFTA_LIST_ELEM of a rule's expressions with the
// library's own unmarshalling. An expression the library cannot decode
// becomes an unknownExpr, which no decoder matches: the rule reads back as
// Foreign and is rewritten, never mistaken for ours.
func parseExpr(fam byte, b []byte) (expr.Any, error) {
	var name string
	var data []byte
	err := walkAttrs(b, func(typ uint16, payload []byte) error {
		switch typ {
		case unix.NFTA_EXPR_NAME:
			name = attrString(payload)
		case unix.NFTA_EXPR_DATA:
			data = payload
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return unmarshalExpr(fam, name, data)
}

// walkAttrs calls fn with the type (flags cleared) and payload of each
// netlink attribute in b, in order. Payloads alias b: fn must copy what it
// keeps (google/nftables' unmarshalling copies what it decodes).
func walkAttrs(b []byte, fn func(typ uint16, payload []byte) error) error {
	for len(b) >= nlaHeaderLen {
		size := int(binary.NativeEndian.Uint16(b))
		if size < nlaHeaderLen || size > len(b) {
			return fmt.Errorf("malformed attribute (%d bytes of %d)", size, len(b))
		}
		typ := binary.NativeEndian.Uint16(b[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if err := fn(typ, b[nlaHeaderLen:size]); err != nil {
			return err
		}
		b = b[min(len(b), (size+3)&^3):]
	}
	return nil
}

// attrString returns a string attribute without its terminating NUL.
func attrString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func unmarshalExpr(fam byte, name string, data []byte) (expr.Any, error) {
	if name == "byteorder" {
		return unmarshalByteorder(data)
	}
	newExpr, ok := exprTypes[name]
	if !ok {
		return unknownExpr{Name: name}, nil
	}
	e := newExpr()
	if err := expr.Unmarshal(fam, data, e); err != nil {
		return nil, fmt.Errorf("expression %s: %w", name, err)
	}
	// A verdict is an immediate into the verdict register; the library
	// decodes it as a Verdict, and so must we.
	if imm, ok := e.(*expr.Immediate); ok && imm.Register == unix.NFT_REG_VERDICT && len(imm.Data) == 0 {
		v := &expr.Verdict{}
		if err := expr.Unmarshal(fam, data, v); err != nil {
			return nil, fmt.Errorf("expression verdict: %w", err)
		}
		return v, nil
	}
	return e, nil
}

// unknownExpr stands for an expression google/nftables does not decode.
type unknownExpr struct {
	expr.Any // nil: never called
	Name     string
}

// exprTypes are the expressions google/nftables decodes, by kernel name
// (as in its exprFromName, which is not exported).
var exprTypes = map[string]func() expr.Any{
	"ct": func() expr.Any { return &expr.Ct{} }, "range": func() expr.Any { return &expr.Range{} },
	"meta": func() expr.Any { return &expr.Meta{} }, "cmp": func() expr.Any { return &expr.Cmp{} },
	"counter": func() expr.Any { return &expr.Counter{} }, "objref": func() expr.Any { return &expr.Objref{} },
	"payload": func() expr.Any { return &expr.Payload{} }, "lookup": func() expr.Any { return &expr.Lookup{} },
	"immediate": func() expr.Any { return &expr.Immediate{} }, "bitwise": func() expr.Any { return &expr.Bitwise{} },
	"redir": func() expr.Any { return &expr.Redir{} }, "nat": func() expr.Any { return &expr.NAT{} },
	"limit": func() expr.Any { return &expr.Limit{} }, "quota": func() expr.Any { return &expr.Quota{} },
	"dynset": func() expr.Any { return &expr.Dynset{} }, "log": func() expr.Any { return &expr.Log{} },
	"exthdr": func() expr.Any { return &expr.Exthdr{} }, "reject": func() expr.Any { return &expr.Reject{} },
	"masq": func() expr.Any { return &expr.Masq{} }, "hash": func() expr.Any { return &expr.Hash{} },
	"fib": func() expr.Any { return &expr.Fib{} }, "numgen": func() expr.Any { return &expr.Numgen{} },
	"queue":     func() expr.Any { return &expr.Queue{} },
	"connlimit": func() expr.Any { return &expr.Connlimit{} }, "notrack": func() expr.Any { return &expr.Notrack{} },
}

// unmarshalByteorder decodes a byteorder expression, which google/nftables
// can encode but not decode (its unmarshal returns "not yet implemented").
func unmarshalByteorder(data []byte) (expr.Any, error) {
	ad, err := netlink.NewAttributeDecoder(data)
	if err != nil {
		return nil, err
	}
	ad.ByteOrder = binary.BigEndian
	e := &expr.Byteorder{}
	for ad.Next() {
		switch ad.Type() {
		case unix.NFTA_BYTEORDER_SREG:
			e.SourceRegister = ad.Uint32()
		case unix.NFTA_BYTEORDER_DREG:
			e.DestRegister = ad.Uint32()
		case unix.NFTA_BYTEORDER_OP:
			e.Op = expr.ByteorderOp(ad.Uint32())
		case unix.NFTA_BYTEORDER_LEN:
			e.Len = ad.Uint32()
		case unix.NFTA_BYTEORDER_SIZE:
			e.Size = ad.Uint32()
		}
	}
	return e, ad.Err()
}
