package kernel

import (
	"encoding/binary"
	"fmt"

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

func unmarshalExpr(fam byte, name string, data []byte) (expr.Any, error) {
	if name == "byteorder" {
		return unmarshalByteorder(data)
	}
	newExpr, ok := exprTypes[name]
	if !ok {
		return unknownExpr{Name: name}, nil
	}
	e := newExpr()
	if err := unmarshalGuarded(fam, data, e); err != nil {
		return nil, fmt.Errorf("expression %s: %w", name, err)
	}
	// A verdict is an immediate into the verdict register; the library
	// decodes it as a Verdict, and so must we.
	if imm, ok := e.(*expr.Immediate); ok && imm.Register == unix.NFT_REG_VERDICT && len(imm.Data) == 0 {
		v := &expr.Verdict{}
		if err := unmarshalGuarded(fam, data, v); err != nil {
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

// unmarshalGuarded is expr.Unmarshal with the library's panics on
// malformed data (a verdict shorter than it says) turned into errors.
func unmarshalGuarded(fam byte, data []byte, e expr.Any) error {
	_, err := guard("expression", func() (struct{}, error) { return struct{}{}, expr.Unmarshal(fam, data, e) })
	return err
}
