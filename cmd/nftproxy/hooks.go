package main

import (
	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/proxy"
)

// hooks returns the work that follows every successful sync.
// TODO(lead): wire proxy/conntrack (UDP stale entries, when
// cfg.Conntrack.UDPStaleEntryCleanup) and proxy/healthcheck
// (healthCheckNodePort servers) here once H4 lands them.
func hooks(cfg *config.Configuration) []proxy.SyncHook {
	_ = cfg
	return nil
}
