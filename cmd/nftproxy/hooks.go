package main

import (
	"errors"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/proxy"
	"github.com/nftproxy/nftproxy/proxy/conntrack"
	"github.com/nftproxy/nftproxy/proxy/healthcheck"
	"github.com/nftproxy/nftproxy/proxy/healthz"
)

// hooks returns the work that follows every successful sync, and a function
// that releases what they hold.
//
// The healthCheckNodePort servers listen on every address (kube-proxy listens
// on the NodePort addresses; with the default "primary" those are only known
// once the Node is read). They answer 503 while the agent itself is
// unhealthy, as kube-proxy's do.
func hooks(cfg *config.Configuration, health *healthz.Server) ([]proxy.SyncHook, func(), error) {
	logger := klog.Background()
	setConntrackTimeouts(conntrack.SysctlRoot, cfg.Conntrack, logger.WithName("sysctl"))
	hc := healthcheck.NewHook(healthcheck.Config{Healthy: health.Healthy, Logger: logger.WithName("healthcheck")})
	list := []proxy.SyncHook{hc}
	closers := []func() error{func() error { hc.Close(); return nil }}
	if cfg.Conntrack.UDPStaleEntryCleanup {
		ct, err := conntrack.NewHook(-1, logger.WithName("conntrack"))
		if err != nil {
			hc.Close()
			return nil, nil, fmt.Errorf("conntrack: %w", err)
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
