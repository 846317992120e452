// Package nft describes nftables tables as plain data and plans the
// transactions that change them:
//
//   - Ruleset, Table, Set, Chain, Rule and the statements (Stmt) are the
//     vocabulary every other package speaks; Text renders them as `nft
//     list` prints them.
//   - Diff compares the committed Ruleset with the desired one and returns a
//     Plan: the ordered operations of one atomic transaction, and the
//     ruleset generation it was made from.
//   - An Applier commits a Plan, all of it or nothing: Fake (in this
//     package) for unit tests, and the netlink applier in nft/kernel for the
//     real kernel. A Reader reads our tables back; a Notifier announces the
//     transactions others commit, as Commits of Changes to our tables.
//
// The desired tables come from proxy/compile. Nothing here reads a clock,
// does I/O or logs; iteration is sorted so that the same input always gives
// the same text and plans.
//
// # Errors
//
// An Applier reports a rejected plan as an *OpError naming the operation,
// and a plan made from an older generation than the ruleset's as a
// *ConflictError.
package nft
