package kernel

import (
	"encoding/binary"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// chunkSize is the size of the buffers a batch is written into: large
// enough that a first sync of 50,000 Services needs a few hundred of them
// (sendmsg takes at most 1024), small enough that growing the batch never
// copies much.
const chunkSize = 1 << 20

const (
	nlmsgHeaderLen = unix.NLMSG_HDRLEN
	nlaHeaderLen   = unix.SizeofNlAttr
	newRuleType    = unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWRULE
	newRuleFlags   = unix.NLM_F_REQUEST | unix.NLM_F_CREATE | unix.NLM_F_APPEND
)

// batchWriter accumulates the messages of one batch, marshalled, between a
// batch-begin and a batch-end message that seal adds.
type batchWriter struct {
	chunks  [][]byte
	count   int    // messages written
	scratch []byte // one message being built
	stmts   map[stmtKey][]byte
	// spare is the first chunk of the last batch, kept for the next: a
	// partial sync's batch fits in it, and allocating (and zeroing) a
	// fresh chunk for each was a large part of what the agent allocated
	// under endpoint churn.
	spare []byte
}

// reset empties w once its batch has been sent or dropped.
func (w *batchWriter) reset() {
	if len(w.chunks) > 0 && cap(w.chunks[0]) == chunkSize {
		w.spare = w.chunks[0][:0]
	}
	w.chunks, w.count, w.stmts = nil, 0, nil
}

// message appends one netlink message; its sequence number is filled in by
// seal.
func (w *batchWriter) message(typ, flags uint16, data []byte) {
	b := w.scratch[:0]
	b = appendHeader(b, typ, flags)
	b = append(b, data...)
	w.add(b)
}

// rule appends an NFT_MSG_NEWRULE message that appends r to chain, as
// google/nftables would write it but without NLM_F_ECHO and without a rule
// ID (nothing refers to our rules by ID).
func (w *batchWriter) rule(f nft.Family, chain string, r nft.Rule) error {
	t := tableOf(f)
	b := w.scratch[:0]
	b = appendHeader(b, newRuleType, newRuleFlags)
	b = append(b, byte(t.Family), unix.NFNETLINK_V0, 0, 0) // struct nfgenmsg
	b = appendString(b, unix.NFTA_RULE_TABLE, t.Name)
	b = appendString(b, unix.NFTA_RULE_CHAIN, chain)
	list := len(b)
	b = appendAttr(b, unix.NLA_F_NESTED|unix.NFTA_RULE_EXPRESSIONS, nil)
	for _, s := range r.Stmts {
		var err error
		if b, err = w.appendStmt(b, f, s); err != nil {
			w.scratch = b
			return err
		}
	}
	binary.NativeEndian.PutUint16(b[list:], uint16(len(b)-list))
	if r.Comment != "" {
		b = appendAttr(b, unix.NFTA_RULE_USERDATA, userdata.AppendString(nil, userdata.TypeComment, r.Comment))
	}
	w.add(b)
	return nil
}

// add copies one complete message (its length still unset) into the
// current chunk, padded to 4 bytes as netlink aligns messages.
func (w *batchWriter) add(msg []byte) {
	for len(msg)%4 != 0 {
		msg = append(msg, 0)
	}
	binary.NativeEndian.PutUint32(msg, uint32(len(msg)))
	w.scratch = msg
	last := len(w.chunks) - 1
	if last < 0 || len(w.chunks[last])+len(msg) > cap(w.chunks[last]) {
		w.chunks = append(w.chunks, w.newChunk(len(msg)))
		last++
	}
	w.chunks[last] = append(w.chunks[last], msg...)
	w.count++
}

// newChunk returns an empty chunk with room for n bytes: the spare one
// when it fits.
func (w *batchWriter) newChunk(n int) []byte {
	if w.spare != nil && n <= cap(w.spare) {
		c := w.spare
		w.spare = nil
		return c
	}
	return make([]byte, 0, max(chunkSize, n))
}

// appendWriter moves the messages of o to the end of w.
func (w *batchWriter) appendWriter(o *batchWriter) {
	w.chunks = append(w.chunks, o.chunks...)
	w.count += o.count
	o.chunks = nil // w's now: not o's spare
	o.reset()
}

// seal numbers the messages from first on and returns the buffers of the
// whole batch, begin and end included: the begin message carries the
// generation the batch was planned against, so that the kernel refuses it
// (ERESTART) if anyone committed since.
func (w *batchWriter) seal(gen uint32, first uint32) ([][]byte, uint32) {
	begin := batchControl(unix.NFNL_MSG_BATCH_BEGIN, gen)
	end := batchControl(unix.NFNL_MSG_BATCH_END, gen)
	seq := first
	setSeq(begin, &seq)
	for _, c := range w.chunks {
		for off := 0; off < len(c); off += int(binary.NativeEndian.Uint32(c[off:])) {
			setSeq(c[off:], &seq)
		}
	}
	setSeq(end, &seq)
	bufs := append([][]byte{begin}, w.chunks...)
	return append(bufs, end), first
}

func setSeq(msg []byte, seq *uint32) {
	binary.NativeEndian.PutUint32(msg[8:], *seq)
	*seq++
}

func batchControl(typ uint16, gen uint32) []byte {
	b := appendHeader(nil, typ, unix.NLM_F_REQUEST)
	b = append(b, unix.AF_UNSPEC, unix.NFNETLINK_V0, 0, unix.NFNL_SUBSYS_NFTABLES) // nfgenmsg, res_id big endian
	if gen != 0 {
		b = appendAttr(b, unix.NFNL_BATCH_GENID, binaryutil.BigEndian.PutUint32(gen))
	}
	binary.NativeEndian.PutUint32(b, uint32(len(b)))
	return b
}

// appendHeader appends a struct nlmsghdr with length, sequence number and
// port ID left zero: the kernel fills in the port ID.
func appendHeader(b []byte, typ, flags uint16) []byte {
	var h [nlmsgHeaderLen]byte
	binary.NativeEndian.PutUint16(h[4:], typ)
	binary.NativeEndian.PutUint16(h[6:], flags)
	return append(b, h[:]...)
}

// appendAttr appends a netlink attribute padded to 4 bytes.
func appendAttr(b []byte, typ uint16, data []byte) []byte {
	var h [nlaHeaderLen]byte
	binary.NativeEndian.PutUint16(h[0:], uint16(nlaHeaderLen+len(data)))
	binary.NativeEndian.PutUint16(h[2:], typ)
	b = append(b, h[:]...)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func appendString(b []byte, typ uint16, s string) []byte {
	return appendAttr(b, typ, append([]byte(s), 0))
}
