package main

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/proxy/agent"
	"github.com/nftproxy/nftproxy/proxy/conntrack"
	"github.com/nftproxy/nftproxy/proxy/healthcheck"
	"github.com/nftproxy/nftproxy/proxy/healthz"
	"github.com/nftproxy/nftproxy/proxy/metrics"
	"github.com/nftproxy/nftproxy/proxy/model"
)

// hooks returns the work that follows every successful sync, and a function
// that releases what they hold.
//
// The healthCheckNodePort servers listen on the NodePort addresses, as
// kube-proxy's do; with the default "primary" those follow the Node object,
// so they are worked out at every sync. They answer 503 while the agent
// itself is unhealthy.
func hooks(cfg *config.Configuration, health *healthz.Server, m *metrics.Metrics) ([]agent.SyncHook, func(), error) {
	logger := klog.Background()
	setConntrackTimeouts(conntrack.SysctlRoot, cfg.Conntrack, logger.WithName("sysctl"))
	hc := healthcheck.NewHook(healthcheck.Config{
		Addrs:   func(n model.Node) []netip.Addr { return agent.CompilerOptions(cfg, n).NodePortIPs(n) },
		Healthy: health.Healthy,
		Logger:  logger.WithName("healthcheck"),
	})
	list := []agent.SyncHook{hc}
	closers := []func() error{func() error { hc.Close(); return nil }}
	if cfg.Conntrack.UDPStaleEntryCleanup {
		ct, err := conntrack.NewHook(-1, logger.WithName("conntrack"))
		if err != nil {
			hc.Close()
			return nil, nil, fmt.Errorf("conntrack: %w", err)
		}
		ct.Observe = func(f model.AddressType, took time.Duration, deleted int) {
			m.ConntrackReconcile.WithLabelValues(string(f)).Observe(took.Seconds())
			m.ConntrackDeleted.WithLabelValues(string(f)).Add(float64(deleted))
		}
		list = append(list, ct)
		closers = append(closers, ct.Close)
	}
	closeAll := func() {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		if err := errors.Join(errs...); err != nil {
			logger.Error(err, "Closing sync hooks")
		}
	}
	return list, closeAll, nil
}
