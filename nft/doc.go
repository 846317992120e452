// Package nft describes nftables tables as plain data and holds the two pure
// halves of every sync:
//
//   - Compile turns a model snapshot, the node and Options into the desired
//     Ruleset: one Table per IP family.
//   - Diff compares the committed Ruleset with the desired one and returns a
//     Plan: the ordered operations of one atomic transaction.
//
// Compiled keeps the compiled output Service by Service (a unit each) so
// that a sync after a change recompiles only the changed Services and diffs
// two partial tables that hold just what they touch (Compiled.Update).
// Compile is Compiled from scratch, so the two cannot drift apart. Conflicts
// between Services (two claiming one IP and port) are settled by claims: the
// first Service in the snapshot wins, the others get a Problem.
//
// None of these reads a clock, does I/O or logs; iteration is sorted so that the
// same input always gives the same tables and plans. An Applier runs a Plan:
// Fake (in this package) for unit tests, and the netlink applier in
// nft/kernel for the real kernel.
//
// # Table shape
//
// The shape follows the kernel cost model in docs/ruleset.md: a constant
// number of sets and maps, each referenced from a constant number of rules,
// and per-Service logic in per-Service chains where an endpoint is chosen by
// `numgen random` rules instead of an anonymous map per Service.
package nft
