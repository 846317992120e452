package main

import (
	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/proxy/conntrack"
)

// setConntrackTimeouts writes the configured conntrack TCP timeouts at
// start, as kube-proxy does. Unlike kube-proxy, a failure is a warning, not
// fatal: deploy/ runs with NET_ADMIN only and a read-only /proc/sys, where
// the node's sysctl.d is the place for these values. A value the node
// already has is never written, so that setup logs nothing.
//
// nf_conntrack_max (kube-proxy's maxPerCore/min) is not set: it is global,
// writable only from the host's network namespace.
func setConntrackTimeouts(root string, c config.Conntrack, logger klog.Logger) {
	var t conntrack.Timeouts
	if c.TCPEstablishedTimeout != nil {
		t.TCPEstablished = c.TCPEstablishedTimeout.Duration
	}
	if c.TCPCloseWaitTimeout != nil {
		t.TCPCloseWait = c.TCPCloseWaitTimeout.Duration
	}
	written, errs := conntrack.SetTimeouts(root, t)
	for _, name := range written {
		logger.Info("Set conntrack sysctl", "sysctl", name)
	}
	for _, err := range errs {
		logger.Info("Warning: could not set conntrack sysctl; set it on the node instead", "err", err)
	}
}
