// Package trace walks a packet through a compiled nft.Table and reports
// where it goes: the destination after DNAT, whether it is masqueraded, and
// whether it is accepted, dropped or rejected.
//
// It interprets the rules themselves, statement by statement, with the
// kernel's semantics; it never looks at the Services the table was compiled
// from. Tests use it to assert behaviour ("each endpoint gets exactly 1/3 of
// new connections") rather than rule text.
//
// # Randomness
//
// A `numgen random mod N < K` match is not sampled: both of its branches are
// followed, weighted by K/N and 1-K/N. A trace therefore returns every
// possible Outcome with its exact probability as a big.Rat, so that
// uniformity is asserted exactly.
//
// # Hooks
//
// At each netfilter hook the table's base chains attached to it run in
// priority order, lowest first. Every packet is treated as the first packet
// of a new connection: `ct state new` matches and nat chains run, once per
// connection and NAT direction, as in the kernel. The path through the hooks
// depends on where the packet comes from (see Path) and on whether its
// destination, after DNAT, is one of the node's own addresses.
//
// # Verdicts
//
// jump pushes a return point; goto replaces the current chain; return, or
// the end of a chain, returns to the caller, and in a base chain applies the
// policy (accept). accept ends the base chain: the packet goes on to the next
// base chain of the hook, as in the kernel. dnat and masquerade accept. drop
// and reject end the trace. Chains may nest at most 16 deep, the kernel's
// limit, which also bounds loops.
//
// # Steps
//
// With Options.Steps every outcome also carries the rules that matched on
// its way (Step: hook, chain, rule, and the set element its lookup found),
// which is what `nftproxy trace` explains to people.
package trace
