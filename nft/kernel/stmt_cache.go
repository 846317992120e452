package kernel

import (
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// Most statements of a large table repeat: every endpoint rule of a
// 10-endpoint Service starts with one of ten `numgen random mod k`
// statements, and the verdicts and matches of the fixed chains repeat in
// every Service. A writer marshals such a statement once and copies its
// bytes afterwards, which saves about a third of the allocations of a
// first sync. Statements that are unique to a rule (the dnat to one
// endpoint, address matches) are marshalled each time.

// stmtKey is a statement whose encoding depends only on its value and the
// family: the statement types cachedStmt accepts are comparable.
type stmtKey struct {
	f nft.Family
	s nft.Stmt
}

func cachedStmt(s nft.Stmt) bool {
	switch s.(type) {
	case nft.Random, nft.MatchProto, nft.MatchNew, nft.MatchInvalid, nft.MatchMarkClear, nft.SetMark,
		nft.Masquerade, nft.Reject, nft.Verdict:
		return true
	}
	return false
}

// appendStmt appends the expressions of s, as NFTA_LIST_ELEM attributes.
func (w *batchWriter) appendStmt(b []byte, f nft.Family, s nft.Stmt) ([]byte, error) {
	if !cachedStmt(s) {
		return appendExprs(b, f, s)
	}
	key := stmtKey{f, s}
	if enc, ok := w.stmts[key]; ok {
		return append(b, enc...), nil
	}
	enc, err := appendExprs(nil, f, s)
	if err != nil {
		return b, err
	}
	if w.stmts == nil {
		w.stmts = map[stmtKey][]byte{}
	}
	w.stmts[key] = enc
	return append(b, enc...), nil
}

func appendExprs(b []byte, f nft.Family, s nft.Stmt) ([]byte, error) {
	exprs, err := encodeStmt(f, s)
	if err != nil {
		return b, err
	}
	fam := byte(tableOf(f).Family)
	for _, e := range exprs {
		data, err := expr.Marshal(fam, e)
		if err != nil {
			return b, err
		}
		b = appendAttr(b, unix.NLA_F_NESTED|unix.NFTA_LIST_ELEM, data)
	}
	return b, nil
}
