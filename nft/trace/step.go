package trace

import (
	"fmt"
	"strings"

	"github.com/nftproxy/nftproxy/nft"
)

// Step is a rule that matched on the way: it changed the packet or its
// mark, or ended in a verdict. Rules that did not match are not steps. A
// trace records steps only when Options.Steps asks for them.
type Step struct {
	Hook  string // the netfilter hook the base chain runs on
	Chain string
	Rule  int // the rule's index in Chain
	// Set and Element are what the rule's last lookup found: the entry of a
	// verdict map, the element of a data map a dnat took, the element of a
	// set an `@set` match found. Set is "" when the rule looked nothing up.
	Set     string
	Element nft.Element
}

// String renders the step for tests and identities: "prerouting services
// #1 @service-ips[10.96.0.10 . 6 . 80]". Set.ElementText renders the
// element as nft does, from the set's types.
func (s Step) String() string {
	text := fmt.Sprintf("%s %s #%d", s.Hook, s.Chain, s.Rule)
	if s.Set != "" {
		parts := make([]string, len(s.Element.Key))
		for i, v := range s.Element.Key {
			parts[i] = valueString(v)
		}
		text += fmt.Sprintf(" @%s[%s]", s.Set, strings.Join(parts, " . "))
	}
	return text
}

func valueString(v nft.Value) string {
	switch {
	case v.Prefix.IsValid():
		return v.Prefix.String()
	case v.Addr.IsValid():
		return v.Addr.String()
	}
	return fmt.Sprint(v.Num)
}

// stepsText is the identity of a list of steps, for merging outcomes.
func stepsText(steps []Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

// saw notes the element a lookup of the current rule found.
func (w *walker) saw(set string, e nft.Element) {
	w.foundSet, w.found = set, e
}

// step records, when asked to, that the rule at at matched for w.
func (t *tracer) step(at loc, w *walker) {
	if !t.opts.Steps {
		return
	}
	w.steps = append(w.steps, Step{Hook: t.hookName, Chain: at.chain, Rule: at.rule, Set: w.foundSet, Element: w.found})
}
