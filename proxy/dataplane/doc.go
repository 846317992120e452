// Package dataplane is the sync engine between the agent's sync loop and the
// kernel: it compiles a snapshot, works out what changed since its last
// commit, and applies that as one atomic transaction.
//
// # Mirror and generation
//
// A Dataplane keeps a mirror of what it last committed and the ruleset
// generation that commit produced. A Sync normally diffs against the mirror
// and never reads the kernel. It reads the kernel back when the generation
// moved for another reason than its own commit (somebody changed the
// ruleset), or when asked for a full reconcile, and repairs whatever differs.
// A failed transaction, or any error after one was sent, marks the mirror
// unknown: the next Sync replaces our tables whole, in one transaction, which
// is valid whatever the kernel holds (our old table, kube-proxy's, or none).
//
// # Watching
//
// Watch reports changes made by others within about a second, so that the
// sync loop can repair them without waiting for its periodic resync.
package dataplane
