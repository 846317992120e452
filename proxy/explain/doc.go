// Package explain says in words where a packet goes through a table that
// nftproxy programmed, and why: the path (hook, chain, rule, the map
// element that matched), then every outcome with its exact probability:
// DNAT to which endpoint of which Service port, whether the source is
// masqueraded and why, or a drop or reject and its reason.
//
// It runs the packet tracer (nft/trace) over the table, as read back from
// the kernel or compiled from manifests, and reads the outcome's steps
// with the table's conventions (docs/ruleset.md): the Service a packet
// reaches is named by the comment on the Service map entry it matched
// ("demo/web:http"), a drop is explained by the rule that dropped it (its
// comment, else its text). A rule it does not know is described, never
// ignored.
//
// What the table does not hold comes from Options: the node's addresses,
// and, when manifests or the API server are at hand, the cluster's objects,
// which name each endpoint's node.
//
// The package is pure: no I/O, no clock. The reports marshal to the JSON
// documented in docs/trace.md, and render as text (Text).
package explain
