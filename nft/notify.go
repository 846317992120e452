package nft

import "context"

// Notifier is implemented by appliers that announce the transactions
// somebody else commits (nft/kernel from the kernel's NFNLGRP_NFTABLES
// multicast group, Fake from its Foreign plans).
type Notifier interface {
	// Subscribe returns a channel that receives, in commit order, every
	// transaction committed by anybody but this Applier. Our own
	// transactions are not announced: their effect is known from Apply.
	// The channel is closed when ctx is done or the subscription fails;
	// a Commit with Lost set comes first when announcements were dropped.
	Subscribe(ctx context.Context) (<-chan Commit, error)
}

// Commit is one transaction somebody else committed, as the kernel
// announced it: the generation it produced and what it changed in our
// tables (none for a transaction on other tables, such as a CNI's).
type Commit struct {
	Gen     uint32
	Changes []Change
	// Lost reports that announcements were dropped (the receive buffer
	// overflowed, or a transaction came while they were muted): any
	// change up to now may be missing. Gen and Changes are unset.
	Lost bool
}

// ChangeKind is what one announced change did.
type ChangeKind int

// The changes an announcement reports. A chain is Changed when an existing
// chain was renamed or its policy or hook altered; a table is Added also
// when an existing one was updated (its flags).
const (
	TableAdded ChangeKind = iota
	TableDeleted
	ChainAdded
	ChainChanged
	ChainDeleted
	RuleAdded
	RuleDeleted
	SetAdded
	SetDeleted
	ElementAdded
	ElementDeleted
	// A counter object was added to or deleted from our table.
	CounterAdded
	CounterDeleted
)

var changeNames = [...]string{"table added", "table deleted", "chain added", "chain changed", "chain deleted",
	"rule added", "rule deleted", "set added", "set deleted", "element added", "element deleted",
	"counter added", "counter deleted"}

func (k ChangeKind) String() string { return changeNames[k] }

// Change is one change to one of our tables.
type Change struct {
	Kind   ChangeKind
	Family Family
	// Name is the chain's (chain and rule changes) or the set's (set and
	// element changes).
	Name string
	// Base marks a chain attached to a hook (chain changes).
	Base bool
	// Anonymous marks a set that belongs to one rule (`ip daddr { ... }`):
	// it comes and goes with its rule.
	Anonymous bool
	// Element is the element added or deleted, decoded against the set's
	// definition; nil when it could not be decoded.
	Element *Element
}
