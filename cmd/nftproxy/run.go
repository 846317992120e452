package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/config"
	"github.com/nftproxy/nftproxy/nft"
	"github.com/nftproxy/nftproxy/nft/kernel"
	"github.com/nftproxy/nftproxy/proxy/agent"
	"github.com/nftproxy/nftproxy/proxy/dataplane"
	"github.com/nftproxy/nftproxy/proxy/healthz"
	"github.com/nftproxy/nftproxy/proxy/metrics"
)

// runAgent is `nftproxy run`: the node agent. It programs the network
// namespace it runs in, and stops on SIGTERM or SIGINT leaving the rules in
// place (exit 0).
func runAgent(args []string, _, stderr io.Writer) error {
	f := newRunFlags(stderr)
	cfg, err := f.parse(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if f.writeConfigTo != "" {
		return f.writeConfig(cfg)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	defer klog.Flush()
	return daemon(ctx, cfg, f.master)
}

// daemon wires the agent together and runs it until ctx is done.
func daemon(ctx context.Context, cfg *config.Configuration, master string) error {
	nodeName, err := cfg.NodeName()
	if err != nil {
		return err
	}
	client, err := newClient(cfg, master)
	if err != nil {
		return err
	}
	k, err := kernel.Open(-1)
	if err != nil {
		return fmt.Errorf("open nftables: %w", err)
	}
	defer k.Close()
	m := metrics.New()
	closeCounters, err := countPackets(m)
	if err != nil {
		return err
	}
	defer closeCounters()
	health := healthz.New(2*cfg.SyncPeriod.Duration, nil)
	health.CountResponses(m.HealthzTotal, m.LivezTotal)
	if err := serve(ctx, cfg.HealthzBindAddress, health.Handler()); err != nil {
		return err
	}
	if err := serve(ctx, cfg.MetricsBindAddress, m.Handler()); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "nftproxy", Host: nodeName})
	syncHooks, closeHooks, err := hooks(cfg, health, m)
	if err != nil {
		return err
	}
	defer closeHooks()
	if limit, ok := setMemoryLimit(); ok {
		klog.InfoS("Go memory limit set from the container's", "bytes", limit)
	}
	klog.InfoS("Starting nftproxy", "version", version, "node", nodeName)
	return agent.New(agent.Config{
		Client: client, NodeName: nodeName, Proxy: cfg, Dataplane: dataplane.New(k),
		Hooks: syncHooks, Recorder: recorder, Metrics: m, Health: health,
	}).Run(ctx)
}

// newClient connects to the API server named by --master and the kubeconfig,
// or in-cluster when both are empty.
func newClient(cfg *config.Configuration, master string) (*kubernetes.Clientset, error) {
	cc := cfg.ClientConnection
	var rc *rest.Config
	var err error
	if master == "" && cc.Kubeconfig == "" {
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = clientcmd.BuildConfigFromFlags(master, cc.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("API server client config: %w", err)
	}
	rc.QPS, rc.Burst = cc.QPS, int(cc.Burst)
	rc.ContentType, rc.AcceptContentTypes = cc.ContentType, cc.AcceptContentTypes
	rc.UserAgent = "nftproxy/" + version
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("API server client: %w", err)
	}
	return client, nil
}

// serve listens on addr at once (a port already taken fails the start) and
// serves h until ctx is done. An empty addr disables the server.
func serve(ctx context.Context, addr string, h http.Handler) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "HTTP server stopped", "address", addr)
		}
	}()
	return nil
}

// countPackets exports the tables' drop and reject counters, read at each
// scrape over a netlink socket of their own, so that a scrape never waits
// for a sync's transaction.
func countPackets(m *metrics.Metrics) (func(), error) {
	k, err := kernel.Open(-1)
	if err != nil {
		return nil, fmt.Errorf("open nftables for the counters: %w", err)
	}
	m.CountPackets(func(f nft.Family) ([]metrics.PacketCount, error) {
		vs, err := k.ReadCounters(f)
		out := make([]metrics.PacketCount, len(vs))
		for i, v := range vs {
			out[i] = metrics.PacketCount{Name: v.Name, Packets: v.Packets}
		}
		return out, err
	})
	return func() { _ = k.Close() }, nil
}
