package nft

import (
	"net/netip"
	"sort"
)

// Family is an nftables table family.
type Family string

// The two families nftproxy programs: one table each.
const (
	IPv4 Family = "ip"
	IPv6 Family = "ip6"
)

// Families lists the families in the order nftproxy handles them.
var Families = []Family{IPv4, IPv6}

// FamilyOf returns the table family that holds addr.
func FamilyOf(addr netip.Addr) Family {
	if addr.Is4() {
		return IPv4
	}
	return IPv6
}

// TableName is the name of our table in each family. It matches kube-proxy's
// so that CNIs and host firewalls that integrate against it keep working.
const TableName = "kube-proxy"

// Table is one nftables table: its sets and maps, and its chains, in the
// order they are created.
type Table struct {
	Family  Family
	Name    string
	Comment string
	Sets    []*Set
	Chains  []*Chain
}

// Chain returns the chain called name, or nil.
func (t *Table) Chain(name string) *Chain {
	for _, c := range t.Chains {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Set returns the set or map called name, or nil.
func (t *Table) Set(name string) *Set {
	for _, s := range t.Sets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Ruleset is the whole state nftproxy owns: at most one table per family.
type Ruleset map[Family]*Table

// Chain is a chain and its rules. Base is nil for a regular chain.
type Chain struct {
	Name  string
	Base  *Base
	Rules []Rule
}

// Base makes a chain a base chain attached to a netfilter hook.
type Base struct {
	Type     string // "filter" or "nat"
	Hook     string // "prerouting", "input", "forward", "output", "postrouting"
	Priority int
}

// Rule is one rule: statements evaluated left to right.
type Rule struct {
	Stmts   []Stmt
	Comment string
}

// DataType is the type of one part of a set key.
type DataType string

// The data types our sets and maps use, spelled as nft prints them.
const (
	TypeIPv4Addr    DataType = "ipv4_addr"
	TypeIPv6Addr    DataType = "ipv6_addr"
	TypeInetProto   DataType = "inet_proto"
	TypeInetService DataType = "inet_service"
)

// AddrType returns the address data type of family f.
func AddrType(f Family) DataType {
	if f == IPv6 {
		return TypeIPv6Addr
	}
	return TypeIPv4Addr
}

// Set is a named set, or a verdict map when Map is true.
type Set struct {
	Name     string
	Key      []DataType
	Map      bool
	Comment  string
	Elements []Element
	// Data are the value types of a data map (Map true): nil for a verdict
	// map.
	Data []DataType
	// Interval lets key parts be prefixes (flags interval).
	Interval bool
	// Dynamic sets are filled from the packet path (flags dynamic,timeout):
	// their elements belong to the kernel, never to a plan.
	Dynamic bool
	// Size bounds the number of elements; 0 is the kernel's default.
	Size uint32
}

// Value is one part of an element key: Addr for address types, Num for
// protocol numbers and ports.
type Value struct {
	Addr netip.Addr
	Num  uint16
	// Prefix is an address range, in interval sets; it is used instead of
	// Addr when valid.
	Prefix netip.Prefix
}

// Element is a set element, or a map element with its verdict.
type Element struct {
	Key     []Value
	Verdict Verdict
	// Data is a data map element's value.
	Data []Value
}

// SortElements sorts s's elements by their text so that output and plans
// are deterministic.
func (s *Set) SortElements() {
	keys := make([]string, len(s.Elements))
	for i, e := range s.Elements {
		keys[i] = s.ElementText(e)
	}
	sort.Sort(byText{keys, s.Elements})
}

type byText struct {
	keys  []string
	elems []Element
}

func (b byText) Len() int           { return len(b.keys) }
func (b byText) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byText) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.elems[i], b.elems[j] = b.elems[j], b.elems[i]
}
