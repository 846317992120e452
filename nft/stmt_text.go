package nft

import (
	"fmt"
	"strings"
)

func fieldText(f Family, field Field) string {
	switch field {
	case Saddr:
		return string(f) + " saddr"
	case Daddr:
		return string(f) + " daddr"
	case L4Proto:
		return "meta l4proto"
	case Number:
		return "numgen random mod 1"
	case Sport:
		return "th sport"
	default:
		return "th dport"
	}
}

// keyText renders a lookup key: the fields, then the numgen part.
func lookupKeyText(f Family, keys []Field, n Numgen) string {
	text := keysText(f, keys)
	if n.Used() {
		text += " . " + n.text()
	}
	return text
}

func (n Numgen) text() string {
	if n.Offset == 0 {
		return fmt.Sprintf("numgen random mod %d", n.Mod)
	}
	return fmt.Sprintf("numgen random mod %d offset %d", n.Mod, n.Offset)
}

func keysText(f Family, keys []Field) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fieldText(f, k)
	}
	return strings.Join(parts, " . ")
}

func (m MatchAddr) text(f Family) string {
	op := ""
	if m.Neg {
		op = "!= "
	}
	value := m.Prefix.String()
	if m.Prefix.IsSingleIP() {
		value = m.Prefix.Addr().String()
	}
	return fieldText(f, m.Field) + " " + op + value
}

func (m MatchProto) text(Family) string { return "meta l4proto " + protoName(m.Proto) }
func (m MatchPort) text(Family) string  { return fmt.Sprintf("th dport %d", m.Port) }
func (MatchNew) text(Family) string     { return "ct state new" }
func (MatchInvalid) text(Family) string { return "ct state invalid" }
func (m MatchMarkClear) text(Family) string {
	return fmt.Sprintf("meta mark & 0x%08x == 0x00000000", m.Bits)
}
func (m InSet) text(f Family) string  { return lookupKeyText(f, m.Keys, m.Num) + " @" + m.Set }
func (m Vmap) text(f Family) string   { return keysText(f, m.Keys) + " vmap @" + m.Map }
func (Masquerade) text(Family) string { return "masquerade fully-random" }
func (Reject) text(Family) string     { return "reject" }

func (r Random) text(Family) string {
	if r.Below == 1 {
		return fmt.Sprintf("numgen random mod %d 0", r.Mod)
	}
	return fmt.Sprintf("numgen random mod %d < %d", r.Mod, r.Below)
}

func (m SetMark) text(Family) string {
	op := "|"
	if m.Op == MarkXor {
		op = "^"
	}
	return fmt.Sprintf("meta mark set meta mark %s 0x%08x", op, m.Bits)
}

func (d DNAT) text(Family) string {
	addr := d.Addr.String()
	if d.Addr.Is6() {
		addr = "[" + addr + "]"
	}
	return fmt.Sprintf("meta l4proto %s dnat to %s:%d", protoName(d.Proto), addr, d.Port)
}

func (d DNATMap) text(f Family) string {
	key := lookupKeyText(f, d.Keys, d.Num)
	if d.Hash.Used() {
		key += " . " + d.Hash.text(f)
	}
	return fmt.Sprintf("dnat %s to %s map @%s", f, key, d.Map)
}

// text renders the hash as nft lists it: the seed in hex, the offset only
// when not 0.
func (h Jhash) text(f Family) string {
	text := fmt.Sprintf("jhash %s mod %d seed 0x%x", keysText(f, h.Fields), h.Mod, h.Seed)
	if h.Offset != 0 {
		text += fmt.Sprintf(" offset %d", h.Offset)
	}
	return text
}

func (v Verdict) text(Family) string { return v.String() }

// String renders the verdict as nft does: "goto service-…", "return".
func (v Verdict) String() string {
	switch v.Kind {
	case Jump:
		return "jump " + v.Chain
	case Goto:
		return "goto " + v.Chain
	case Return:
		return "return"
	case Accept:
		return "accept"
	default:
		return "drop"
	}
}
