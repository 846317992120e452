package nft

import "net/netip"

// Stmt is one statement of a rule: a match, a mangling action or a verdict.
// The set of statements is closed: the text renderer, the netlink encoder
// and decoder and the packet tracer all switch over exactly these types.
type Stmt interface {
	// text renders the statement in nft syntax, as `nft list` prints it.
	text(f Family) string
}

// Field is a packet field a rule can match or use as a lookup key.
type Field int

// The packet fields our rules read.
const (
	Saddr   Field = iota // ip saddr / ip6 saddr
	Daddr                // ip daddr / ip6 daddr
	L4Proto              // meta l4proto
	Dport                // th dport
	// Number is a number drawn by numgen. It appears only in the typeof
	// declaration of a set (`numgen random mod 1`); a rule's key gives its
	// numgen part with a Numgen value.
	Number
	// Sport is the transport header source port (th sport). Only a Jhash
	// reads it.
	Sport
)

// Numgen is the numgen part that may end a lookup key: `numgen random mod
// Mod offset Offset`, a number drawn uniformly from [Offset, Offset+Mod).
// With Mod 1 it is the constant Offset: nft 1.0.6 cannot parse a literal
// inside a lookup key, but lists and reloads this. The zero value means the
// key has no numgen part.
type Numgen struct {
	Mod    uint32
	Offset uint32
}

// Used reports whether the key has a numgen part.
func (n Numgen) Used() bool { return n.Mod > 0 }

// MatchAddr matches the source or destination address against a prefix; a
// full-length prefix matches one address.
type MatchAddr struct {
	Field  Field // Saddr or Daddr
	Neg    bool
	Prefix netip.Prefix
}

// MatchProto matches the layer 4 protocol number.
type MatchProto struct{ Proto uint8 }

// MatchPort matches the transport header destination port.
type MatchPort struct{ Port uint16 }

// MatchNew matches packets that start a connection (ct state new).
type MatchNew struct{}

// MatchInvalid matches packets conntrack could not place in any connection
// (ct state invalid): a TCP segment outside the window, an impossible set
// of flags.
type MatchInvalid struct{}

// MatchMarkClear matches packets whose mark has none of Bits set.
type MatchMarkClear struct{ Bits uint32 }

// InSet matches when the concatenation of Keys, then Num when used, is an
// element of Set.
type InSet struct {
	Keys []Field
	Num  Numgen
	Set  string
}

// Vmap looks the concatenation of Keys up in a verdict map and applies the
// verdict it finds; no match continues with the next rule.
type Vmap struct {
	Keys []Field
	Map  string
}

// Random matches with probability Below/Mod: a fresh `numgen random mod
// Mod` is drawn for every evaluation.
type Random struct {
	Mod   uint32
	Below uint32
}

// DNATMap rewrites the destination to the address and port that Map, a
// data map, holds for the concatenation of Keys and then Num: `dnat ip to
// ip daddr . meta l4proto . th dport . numgen random mod 3 offset 9 map
// @endpoints`. A key the map lacks ends the rule, like a failed match.
//
// With Hash used instead of Num, the last key part is the hash of the
// connection: `... . jhash ip saddr . th sport . ip daddr . th dport mod
// 1021 seed 0x1 offset 4294901760 map @endpoints`, the same number for the
// same connection on every node.
type DNATMap struct {
	Keys []Field
	Num  Numgen
	Hash Jhash
	Map  string
}

// Jhash is the key part `jhash FIELDS mod Mod seed Seed offset Offset`:
// the kernel's jhash of the fields (each padded to whole 32-bit words, as
// they sit in the registers), scaled into [0, Mod) and moved by Offset.
// The zero value means no hash part.
type Jhash struct {
	Fields []Field
	Mod    uint32
	Seed   uint32
	Offset uint32
}

// Used reports whether the key has a hash part.
func (h Jhash) Used() bool { return h.Mod > 0 }

// MarkOp is how SetMark combines Bits with the packet mark.
type MarkOp int

// The mark operations we use.
const (
	MarkOr  MarkOp = iota // set the bits
	MarkXor               // toggle the bits (clears bits known to be set)
)

// SetMark changes the packet mark.
type SetMark struct {
	Op   MarkOp
	Bits uint32
}

// DNAT rewrites the destination to Addr:Port. Proto restates the protocol
// the rule handles: nft needs it to print and parse a port in `dnat to`.
type DNAT struct {
	Proto uint8
	Addr  netip.Addr
	Port  uint16
}

// Masquerade source-NATs to the outgoing interface's address with a fully
// random source port, so that two nodes' flows never collide on a port.
type Masquerade struct{}

// Reject answers with ICMP port unreachable (ICMPv6 in ip6 tables), so that
// clients fail at once instead of timing out.
type Reject struct{}

// VerdictKind is the kind of a verdict.
type VerdictKind int

// The verdicts we use.
const (
	Jump VerdictKind = iota
	Goto
	Return
	Accept
	Drop
)

// Verdict ends (or branches out of) a rule; Chain is set for Jump and Goto.
// As a map element's value it is what a lookup returns.
type Verdict struct {
	Kind  VerdictKind
	Chain string
}

// JumpTo and GotoChain build the two branching verdicts.
func JumpTo(chain string) Verdict    { return Verdict{Kind: Jump, Chain: chain} }
func GotoChain(chain string) Verdict { return Verdict{Kind: Goto, Chain: chain} }

// Protocol numbers, as nft names them.
const (
	ProtoTCP  uint8 = 6
	ProtoUDP  uint8 = 17
	ProtoSCTP uint8 = 132
)

// Foreign stands for expressions nftproxy did not write, read back from the
// kernel. It never equals a statement the compiler produces, so a chain that
// holds one is rewritten by the next sync.
type Foreign struct{ Desc string }

func (f Foreign) text(Family) string { return "foreign(" + f.Desc + ")" }
