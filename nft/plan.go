package nft

import (
	"fmt"
	"strings"
)

// OpKind is the kind of one operation of a Plan.
type OpKind int

// The operations a Plan is made of, in the order nft would name them.
const (
	AddTable OpKind = iota
	DeleteTable
	AddSet
	DeleteSet
	AddChain
	FlushChain
	DeleteChain
	AddRule
	AddElements
	DeleteElements
	AddCounter
)

var opNames = [...]string{"add table", "delete table", "add set", "delete set", "add chain",
	"flush chain", "delete chain", "add rule", "add element", "delete element", "add counter"}

func (k OpKind) String() string { return opNames[k] }

// Op is one operation on a family's table. Which fields are set depends on
// Kind: Table for AddTable, Set for AddSet, Chain for AddChain, Counter for
// AddCounter, Name and Rule
// for AddRule, Name, Set (its definition) and Elements for element
// operations, Name for deletes and flushes.
type Op struct {
	Kind     OpKind
	Family   Family
	Table    *Table
	Set      *Set
	Chain    *Chain
	Rule     *Rule
	Name     string
	Elements []Element
	Counter  *Counter
}

// Plan is the ordered operations of one atomic transaction.
type Plan struct {
	Ops []Op
	// Full is true when the plan rebuilds at least one table from scratch.
	Full bool
	// Gen is the ruleset generation the plan was made from. An Applier
	// commits the plan only while the ruleset is still at Gen, and returns
	// a *ConflictError otherwise: a plan made from what the kernel held at
	// Gen would be wrong on top of somebody else's later commit. 0 commits
	// whatever the ruleset holds; the kernel never uses generation 0.
	Gen uint32
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return len(p.Ops) == 0 }

// Stats counts the objects a plan adds and removes, for output and metrics.
type Stats struct {
	TablesAdded, TablesRemoved     int
	ChainsAdded, ChainsRemoved     int
	ChainsFlushed, RulesAdded      int
	SetsAdded, SetsRemoved         int
	ElementsAdded, ElementsRemoved int
}

// Stats counts what the plan does.
func (p *Plan) Stats() Stats {
	var s Stats
	for _, op := range p.Ops {
		switch op.Kind {
		case AddTable:
			s.TablesAdded++
		case DeleteTable:
			s.TablesRemoved++
		case AddChain:
			s.ChainsAdded++
		case DeleteChain:
			s.ChainsRemoved++
		case FlushChain:
			s.ChainsFlushed++
		case AddRule:
			s.RulesAdded++
		case AddSet:
			s.SetsAdded++
		case DeleteSet:
			s.SetsRemoved++
		case AddElements:
			s.ElementsAdded += len(op.Elements)
		case DeleteElements:
			s.ElementsRemoved += len(op.Elements)
		}
	}
	return s
}

func (s Stats) String() string {
	return fmt.Sprintf("chains +%d -%d (~%d), rules +%d, sets +%d -%d, elements +%d -%d",
		s.ChainsAdded, s.ChainsRemoved, s.ChainsFlushed, s.RulesAdded,
		s.SetsAdded, s.SetsRemoved, s.ElementsAdded, s.ElementsRemoved)
}

// String renders op as an nft command, for logs and error messages.
func (op Op) String() string {
	prefix := fmt.Sprintf("%s %s %s", op.Kind, op.Family, TableName)
	switch op.Kind {
	case AddTable, DeleteTable:
		return prefix
	case AddSet:
		return prefix + " " + op.Set.Name
	case AddChain:
		return prefix + " " + op.Chain.Name
	case AddCounter:
		return prefix + " " + op.Counter.Name
	case AddRule:
		return prefix + " " + op.Name + " " + op.Rule.Text(op.Family)
	case AddElements, DeleteElements:
		return fmt.Sprintf("%s %s { %d elements }", prefix, op.Name, len(op.Elements))
	default:
		return prefix + " " + op.Name
	}
}

// Text renders the whole plan, one operation a line.
func (p *Plan) Text() string {
	var b strings.Builder
	for _, op := range p.Ops {
		b.WriteString(op.String())
		b.WriteByte('\n')
	}
	return b.String()
}
