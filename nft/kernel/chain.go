package kernel

import (
	"fmt"

	"github.com/google/nftables"

	"github.com/nftproxy/nftproxy/nft"
)

// Chains go to the kernel through google/nftables (newChain) and come back
// from its ListChainsOfTableFamily (decodeBase).

// hookNums are the netfilter hooks our base chains attach to, by name.
var hookNums = map[string]*nftables.ChainHook{
	"prerouting": nftables.ChainHookPrerouting, "input": nftables.ChainHookInput,
	"forward": nftables.ChainHookForward, "output": nftables.ChainHookOutput,
	"postrouting": nftables.ChainHookPostrouting,
}

// newChain is c in table t: a base chain with policy accept when c has a
// hook.
func newChain(t *nftables.Table, c *nft.Chain) *nftables.Chain {
	ch := &nftables.Chain{Table: t, Name: c.Name}
	if c.Base != nil {
		prio := nftables.ChainPriority(c.Base.Priority)
		accept := nftables.ChainPolicyAccept
		ch.Hooknum = hookNums[c.Base.Hook]
		ch.Priority = &prio
		ch.Type = nftables.ChainType(c.Base.Type)
		ch.Policy = &accept
	}
	return ch
}

// decodeBase reads a chain's hook. A hook we never use decodes to a name
// of its own, which never equals a Base the compiler writes.
func decodeBase(kc *nftables.Chain) *nft.Base {
	if kc.Hooknum == nil || kc.Priority == nil {
		return nil
	}
	for name, h := range hookNums {
		if *h == *kc.Hooknum {
			return &nft.Base{Type: string(kc.Type), Hook: name, Priority: int(*kc.Priority)}
		}
	}
	return &nft.Base{Type: string(kc.Type), Hook: fmt.Sprintf("hook-%d", *kc.Hooknum), Priority: int(*kc.Priority)}
}
