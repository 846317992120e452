package agent

import "github.com/nftproxy/nftproxy/proxy/model"

// SyncHook is work that follows the data plane: conntrack clean-up of UDP
// flows whose endpoint went away, health-check servers for
// externalTrafficPolicy: Local. The agent calls every registered hook, in
// order, on its sync goroutine.
type SyncHook interface {
	// AfterSync runs after a Sync committed (or found nothing to do). prev is
	// the snapshot of the previous successful sync (nil on the first). Must
	// not block for long: the next sync waits for it. Must not keep prev,
	// cur or anything in their arrays after it returns: their memory is
	// reused for later snapshots (tracker.Release).
	AfterSync(prev, cur *model.Snapshot, node model.Node)
}
