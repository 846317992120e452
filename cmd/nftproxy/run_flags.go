package main

import (
	goflag "flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/config"
)

// runFlags are `nftproxy run`'s flags: kube-proxy's, where they mean the
// same. Each one set on the command line overrides the configuration file.
type runFlags struct {
	fs            *pflag.FlagSet
	configFile    string
	master        string
	writeConfigTo string
	// values receives the flags that map onto config fields, before the
	// overlay copies the ones set explicitly.
	values config.Configuration
}

func newRunFlags(stderr io.Writer) *runFlags {
	f := &runFlags{fs: pflag.NewFlagSet("run", pflag.ContinueOnError)}
	fs, v := f.fs, &f.values
	fs.SetOutput(stderr)
	fs.StringVar(&f.configFile, "config", "", "ProxyConfiguration or KubeProxyConfiguration file")
	fs.StringVar(&f.master, "master", "", "address of the Kubernetes API server (overrides any value in kubeconfig)")
	fs.StringVar(&f.writeConfigTo, "write-config-to", "", "write the effective configuration to this file and exit")
	fs.StringVar(&v.ClientConnection.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file (default: in-cluster service account)")
	fs.StringVar(&v.HostnameOverride, "hostname-override", "", "name of this node's Node object (default: the hostname)")
	fs.StringVar(&v.ClusterCIDR, "cluster-cidr", "", "Pod CIDRs, comma-separated, at most one per IP family")
	fs.BoolVar(&v.MasqueradeAll, "masquerade-all", false, "masquerade all traffic to Service IPs")
	fs.StringSliceVar(&v.NodePortAddresses, "nodeport-addresses", nil, `CIDRs NodePorts are served on, "primary" or "all" (default primary)`)
	fs.StringVar(&v.HealthzBindAddress, "healthz-bind-address", "0.0.0.0:10256", "IP:port of the /healthz and /livez server; empty disables it")
	fs.StringVar(&v.MetricsBindAddress, "metrics-bind-address", "127.0.0.1:10249", "IP:port of the /metrics server; empty disables it")
	fs.DurationVar(&v.MinSyncPeriod.Duration, "min-sync-period", time.Second, "least time between two syncs")
	fs.DurationVar(&v.SyncPeriod.Duration, "sync-period", 30*time.Second, "longest time between two syncs (periodic full reconcile)")
	addKlogFlags(fs)
	return f
}

// addKlogFlags adds klog's verbosity flags (--v, --vmodule).
func addKlogFlags(fs *pflag.FlagSet) {
	gfs := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(gfs)
	for _, name := range []string{"v", "vmodule"} {
		fs.AddGoFlag(gfs.Lookup(name))
	}
}

// overlays copies a flag's value into the configuration; only flags set on
// the command line are copied (defaults < file < flags set explicitly).
var overlays = map[string]func(dst, src *config.Configuration){
	"kubeconfig":           func(d, s *config.Configuration) { d.ClientConnection.Kubeconfig = s.ClientConnection.Kubeconfig },
	"hostname-override":    func(d, s *config.Configuration) { d.HostnameOverride = s.HostnameOverride },
	"cluster-cidr":         func(d, s *config.Configuration) { d.ClusterCIDR = s.ClusterCIDR },
	"masquerade-all":       func(d, s *config.Configuration) { d.MasqueradeAll = s.MasqueradeAll },
	"nodeport-addresses":   func(d, s *config.Configuration) { d.NodePortAddresses = s.NodePortAddresses },
	"healthz-bind-address": func(d, s *config.Configuration) { d.HealthzBindAddress = s.HealthzBindAddress },
	"metrics-bind-address": func(d, s *config.Configuration) { d.MetricsBindAddress = s.MetricsBindAddress },
	"min-sync-period": func(d, s *config.Configuration) {
		d.MinSyncPeriod = metav1.Duration{Duration: s.MinSyncPeriod.Duration}
	},
	"sync-period": func(d, s *config.Configuration) { d.SyncPeriod = metav1.Duration{Duration: s.SyncPeriod.Duration} },
}

// parse parses args and returns the effective, validated configuration.
// Warnings about file fields that have no effect go to stderr.
func (f *runFlags) parse(args []string, stderr io.Writer) (*config.Configuration, error) {
	if err := f.fs.Parse(args); err != nil {
		return nil, err
	}
	if f.fs.NArg() > 0 {
		return nil, fmt.Errorf("run: unexpected argument %q", f.fs.Arg(0))
	}
	cfg := config.Default()
	if f.configFile != "" {
		var warnings []string
		var err error
		if cfg, warnings, err = config.Load(f.configFile); err != nil {
			return nil, err
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "warning: %s: %s\n", f.configFile, w)
		}
	}
	f.fs.Visit(func(fl *pflag.Flag) {
		if apply, ok := overlays[fl.Name]; ok {
			apply(cfg, &f.values)
		}
	})
	if err := config.Validate(cfg); err != nil {
		if f.configFile != "" {
			return nil, fmt.Errorf("%s with flags: %w", f.configFile, err)
		}
		return nil, err
	}
	return cfg, nil
}

// writeConfig writes cfg to --write-config-to.
func (f *runFlags) writeConfig(cfg *config.Configuration) error {
	out, err := os.Create(f.writeConfigTo)
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := config.Write(out, cfg); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// isRunArgs reports whether bare `nftproxy ARGS` means `nftproxy run ARGS`:
// no subcommand, only flags, as kube-proxy is invoked.
func isRunArgs(args []string) bool {
	return len(args) == 0 || (strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help")
}
