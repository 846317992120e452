package nft

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Text renders a ruleset as nft would list it: one table per family, IPv4
// first. The output can be loaded with `nft -f`.
func (rs Ruleset) Text() string {
	var b strings.Builder
	for _, f := range Families {
		if t := rs[f]; t != nil {
			b.WriteString(t.Text())
		}
	}
	return b.String()
}

// CanonicalText renders rs as Text does with each table's sets and chains
// sorted by name. A patched table lists new chains last (the kernel puts
// them there too), so order is not part of what a table means: two
// rulesets that hold the same render the same.
func (rs Ruleset) CanonicalText() string {
	c := rs.Clone()
	for _, t := range c {
		sort.Slice(t.Chains, func(i, j int) bool { return t.Chains[i].Name < t.Chains[j].Name })
		sort.Slice(t.Sets, func(i, j int) bool { return t.Sets[i].Name < t.Sets[j].Name })
		sort.Slice(t.Counters, func(i, j int) bool { return t.Counters[i].Name < t.Counters[j].Name })
	}
	return c.Text()
}

// Text renders one table in the layout of `nft list table`.
func (t *Table) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s %s {\n", t.Family, t.Name)
	if t.Comment != "" {
		fmt.Fprintf(&b, "\tcomment %q\n", t.Comment)
	}
	var blocks []string
	for _, c := range t.Counters {
		blocks = append(blocks, c.text())
	}
	for _, s := range t.Sets {
		blocks = append(blocks, s.text(t.Family))
	}
	for _, c := range t.Chains {
		blocks = append(blocks, c.text(t.Family))
	}
	b.WriteString(strings.Join(blocks, "\n"))
	b.WriteString("}\n")
	return b.String()
}

func (s *Set) text(f Family) string {
	var b strings.Builder
	kind := "set"
	if s.Map {
		kind = "map"
	}
	fmt.Fprintf(&b, "\t%s %s {\n\t\t%s\n", kind, s.Name, s.typeLine(f))
	b.WriteString(s.flagsText())
	if s.Comment != "" {
		fmt.Fprintf(&b, "\t\tcomment %q\n", s.Comment)
	}
	if len(s.Elements) > 0 {
		elems := make([]string, len(s.Elements))
		for i, e := range s.Elements {
			elems[i] = s.ElementText(e)
		}
		fmt.Fprintf(&b, "\t\telements = { %s }\n", strings.Join(elems, ",\n\t\t\t     "))
	}
	b.WriteString("\t}\n")
	return b.String()
}

// TypeText renders the set's type line: "ipv4_addr . inet_service : verdict".
func (s *Set) TypeText() string {
	parts := make([]string, len(s.Key))
	for i, k := range s.Key {
		parts[i] = string(k)
	}
	text := strings.Join(parts, " . ")
	if s.Map {
		text += " : " + s.dataTypeText()
	}
	return text
}

// typeLine renders the line that declares the key: by type, or by the
// expressions that build it (typeof).
func (s *Set) typeLine(f Family) string {
	if len(s.Typeof) == 0 {
		return "type " + s.TypeText()
	}
	text := "typeof " + keysText(f, s.Typeof)
	if s.Map {
		text += " : " + keysText(f, s.DataTypeof)
	}
	return text
}

// KeyText renders an element's key: "10.96.0.1 . tcp . 80".
func (s *Set) KeyText(key []Value) string {
	return string(s.appendKeyText(make([]byte, 0, 64), key))
}

// ElementText renders one element as nft lists it: `10.96.0.1 . tcp . 80
// comment "demo/web:http" : goto pick-endpoint`. The differ compares
// elements by this text, so a changed comment is a changed element. It is
// appended into one buffer: the differ renders every element of the
// partial tables of each sync (a tenth of a sync's CPU under churn).
func (s *Set) ElementText(e Element) string {
	b := s.appendKeyText(make([]byte, 0, 96), e.Key)
	if e.Comment != "" {
		b = strconv.AppendQuote(append(b, " comment "...), e.Comment)
	}
	switch {
	case s.Map && len(s.Data) > 0:
		b = s.appendDataText(append(b, " : "...), e.Data)
	case s.Map:
		b = append(append(b, " : "...), e.Verdict.String()...)
	}
	return string(b)
}

func (s *Set) appendKeyText(b []byte, key []Value) []byte {
	for i, v := range key {
		if i > 0 {
			b = append(b, " . "...)
		}
		b = appendValueText(b, s.Key[i], v)
	}
	return b
}

func valueText(t DataType, v Value) string {
	return string(appendValueText(nil, t, v))
}

func appendValueText(b []byte, t DataType, v Value) []byte {
	switch t {
	case TypeInetProto:
		return append(b, protoName(uint8(v.Num))...)
	case TypeInetService, TypeInteger:
		return strconv.AppendUint(b, uint64(v.Num), 10)
	default:
		return appendAddrValueText(b, v)
	}
}

func protoName(p uint8) string {
	switch p {
	case ProtoTCP:
		return "tcp"
	case ProtoUDP:
		return "udp"
	case ProtoSCTP:
		return "sctp"
	}
	return strconv.Itoa(int(p))
}

func (c *Chain) text(f Family) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\tchain %s {\n", c.Name)
	if c.Base != nil {
		fmt.Fprintf(&b, "\t\ttype %s hook %s priority %s; policy accept;\n",
			c.Base.Type, c.Base.Hook, priorityText(c.Base.Hook, c.Base.Priority))
	}
	for _, r := range c.Rules {
		fmt.Fprintf(&b, "\t\t%s\n", r.Text(f))
	}
	b.WriteString("\t}\n")
	return b.String()
}

// Standard priority names, as nft prints them for the ip and ip6 families.
// hook is the only hook a name is valid on ("" for all): nft before 1.0.9
// accepts dstnat only on prerouting and srcnat only on postrouting, and
// lists other hooks' priorities as numbers.
var priorityNames = []struct {
	name  string
	value int
	hook  string
}{{"raw", -300, ""}, {"mangle", -150, ""}, {"dstnat", -100, "prerouting"}, {"filter", 0, ""},
	{"security", 50, ""}, {"srcnat", 100, "postrouting"}}

func priorityText(hook string, p int) string {
	best, bestDist := "", 11
	for _, n := range priorityNames {
		if n.hook != "" && n.hook != hook {
			continue
		}
		d := p - n.value
		if d < 0 {
			d = -d
		}
		if d < bestDist {
			best, bestDist = n.name, d
		}
	}
	switch {
	case best == "":
		return strconv.Itoa(p)
	case p == nameValue(best):
		return best
	case p > nameValue(best):
		return fmt.Sprintf("%s + %d", best, p-nameValue(best))
	default:
		return fmt.Sprintf("%s - %d", best, nameValue(best)-p)
	}
}

func nameValue(name string) int {
	for _, n := range priorityNames {
		if n.name == name {
			return n.value
		}
	}
	return 0
}

// Text renders the rule as one line of nft syntax.
func (r Rule) Text(f Family) string {
	parts := make([]string, 0, len(r.Stmts)+1)
	for _, s := range r.Stmts {
		parts = append(parts, s.text(f))
	}
	if r.Comment != "" {
		parts = append(parts, fmt.Sprintf("comment %q", r.Comment))
	}
	return strings.Join(parts, " ")
}
