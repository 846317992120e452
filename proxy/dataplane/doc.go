// Package dataplane is the sync engine between the agent's sync loop and the
// kernel: it compiles a snapshot, works out what changed since its last
// commit, and applies that as one atomic transaction.
//
// # Mirror and generation
//
// A Dataplane keeps a mirror of what it last committed (a compile.Tables:
// the desired tables, Service by Service) and the ruleset generation that
// commit produced. A Sync recompiles only the Services in Input.Changed and
// sends the partial plan compile.Tables.Update returns; it never reads the
// kernel while the generation is its own, since every commit by anyone
// moves it. When the generation moved for another reason (somebody changed
// the ruleset), it reads our tables back and repairs whatever differs.
// Input.Full recompiles everything, which also heals a missed change: one
// Service at a time against the mirror (compile.Tables.Stale), then updates
// the Services that differ, so that a periodic resync never holds two
// compiled clusters at once.
//
// Every plan carries the generation it was made from (nft.Plan.Gen), and
// the kernel commits it only while the ruleset is still at that generation.
// When somebody else commits between our reading of the generation and our
// commit, the kernel refuses the batch and nothing of it applies; the Sync
// reads our tables back and commits a plan from what they hold now
// (Result.Replanned), never the old plan on top of the other commit.
//
// A failed transaction, or any error around one, marks the mirror unknown:
// the next Sync compiles from scratch and replaces our tables whole, in one
// transaction (add, delete, add the table), which is valid whatever the
// kernel holds: our old table, kube-proxy's, or none. The same happens on
// the first Sync, so a restart takes over without a gap and never flushes
// first.
//
// # Watching
//
// Watch reports changes made by others within about a second, so that the
// sync loop can repair them without waiting for its periodic resync.
package dataplane
