package nft

import (
	"net/netip"
	"reflect"
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
	// Counters are the table's named counter objects.
	Counters []Counter
	Sets     []*Set
	Chains   []*Chain
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

// Equal reports whether c and o are the same chain: name, hook and rules.
func (c *Chain) Equal(o *Chain) bool {
	return c.Name == o.Name && reflect.DeepEqual(c.Base, o.Base) && sameRules(c, o)
}

// sameRules reports whether a and b hold the same rules, in order.
func sameRules(a, b *Chain) bool {
	if len(a.Rules) != len(b.Rules) {
		return false
	}
	for i := range a.Rules {
		if !reflect.DeepEqual(a.Rules[i], b.Rules[i]) {
			return false
		}
	}
	return true
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
	// TypeInteger is a 32-bit number in host byte order: what numgen
	// draws. Only sets declared with Typeof can have it.
	TypeInteger DataType = "integer"
)

// AddrType returns the address data type of family f.
func AddrType(f Family) DataType {
	if f == IPv6 {
		return TypeIPv6Addr
	}
	return TypeIPv4Addr
}
