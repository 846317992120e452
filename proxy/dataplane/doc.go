// Package dataplane is the sync engine between the agent's sync loop and the
// kernel: it compiles a snapshot, works out what changed since its last
// commit, and applies that as one atomic transaction.
//
// # Mirror and generation
//
// A Dataplane keeps a mirror of what it last committed (a compile.Tables:
// the desired tables, Service by Service) and the ruleset generation up to
// which it knows what the kernel holds of our tables. A Sync recompiles
// only the Services in Input.Changed and sends the partial plan
// compile.Tables.Update returns; it never reads the kernel while it can
// tell what the kernel holds, since every commit by anyone moves the
// generation and, while Watch follows them, is announced with what it
// changed. Input.Full recompiles everything, which also heals a missed
// change: one Service at a time against the mirror (compile.Tables.Stale),
// then updates the Services that differ, so that a periodic resync never
// holds two compiled clusters at once.
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
// Watch follows the kernel's announcements of others' transactions
// (nft.Notifier: the NFNLGRP_NFTABLES multicast group) and repairs what
// they change in our tables as soon as they are announced, by itself,
// without waiting for a Sync or its minSyncPeriod. The changes are kept as
// drift against the mirror: the elements, by key, with what the kernel
// holds for them now, and the chains whose rules changed, were deleted or
// added. A repair plans from them alone (compile.Tables.Part looks up what
// the mirror wants of those objects, without assembling the tables), with
// the generation the last announcement brought: an element deleted is
// added again, a chain whose rules changed is flushed and filled again, a
// chain of somebody else's is deleted. A table, set or base chain deleted
// or changed rebuilds the table whole from the mirror. A transaction on
// another table (a CNI's) is only noticed: the mirror stays exact at its
// generation.
//
// When announcements are lost (a full receive buffer, a transaction while
// ours were muted), or the Kernel announces nothing, the tables are read
// back whole and compared, as before notifications were followed. A Sync
// that finds the generation moved first takes the announcements up to it,
// and repairs their drift in a transaction of its own, before its own plan.
// Repairs of a fight (somebody changing our tables again as soon as they
// are repaired) are spaced out, up to 10 s apart. The periodic full
// reconcile stays the safety net for anything announcements cannot tell.
package dataplane
