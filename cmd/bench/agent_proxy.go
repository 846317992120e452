package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// proxyKind is a proxy the agent benchmark runs.
type proxyKind string

const (
	nftproxy  proxyKind = "nftproxy"
	kubeProxy proxyKind = "kube-proxy"
)

// metricsAddr is where both proxies serve /metrics, on the node's
// loopback (both default to it).
const metricsAddr = "127.0.0.1:10249"

// proxyArgs returns the command line of a proxy: the same API server
// (through the node's forwarder), node name and cluster CIDR for both,
// and every other setting at its default (minSyncPeriod 1 s, syncPeriod
// 30 s).
func proxyArgs(kind proxyKind, bins binaries, kubeconfig, dir string) ([]string, error) {
	if kind == nftproxy {
		return []string{bins.nftproxy, "--kubeconfig=" + kubeconfig, "--hostname-override=" + e2e.NodeName,
			"--cluster-cidr=" + clusterCIDR.String(), "--metrics-bind-address=" + metricsAddr}, nil
	}
	cfg := filepath.Join(dir, "kube-proxy.yaml")
	if err := os.WriteFile(cfg, []byte(kubeProxyConfig(kubeconfig)), 0o644); err != nil {
		return nil, err
	}
	return []string{bins.kubeProxy, "--config=" + cfg}, nil
}

// kubeProxyConfig is kube-proxy's configuration: nftables mode (what
// --proxy-mode nftables sets; with --config, kube-proxy ignores the other
// flags). Its conntrack settings are all 0, which leaves the conntrack
// sysctls and the module's hashsize as they are: some of them are global
// to the machine, not to the node's namespace. oomScoreAdj 0 leaves the
// process's OOM score as nftproxy's is.
func kubeProxyConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
hostnameOverride: %s
clusterCIDR: %s
clientConnection:
  kubeconfig: %s
metricsBindAddress: %s
healthzBindAddress: 0.0.0.0:10256
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
`, e2e.NodeName, clusterCIDR, kubeconfig, metricsAddr)
}

// process is a running proxy: started with `nsenter --net=` (which execs
// it, so the pid is the proxy's), its output in a log file.
type process struct {
	name  string
	cmd   *exec.Cmd
	start time.Time
	log   string
	done  chan struct{}
	err   error
}

func startProcess(n *node, args []string, log string) (*process, error) {
	out, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("nsenter", append([]string{"--net=" + n.ns.path(), "--"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	p := &process{name: filepath.Base(args[0]), cmd: cmd, log: log, done: make(chan struct{}), start: time.Now()}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// alive returns an error with the log's tail when the process has exited.
func (p *process) alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v\n%s", p.name, p.err, tail(p.log, 20))
	default:
		return nil
	}
}

// stop sends SIGTERM, then SIGKILL after 10 s, and waits. It returns the
// peak resident memory the kernel reports for the exited process
// (ru_maxrss), in bytes.
func (p *process) stop() int64 {
	_ = p.cmd.Process.Signal(syscall.SIGTERM) // by its own pid
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024 // KiB on Linux
	}
	return 0
}

// cpu returns the CPU time the process and its waited-for children (such
// as kube-proxy's nft) have used: user + system, from /proc/PID/stat.
func (p *process) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: fields count from the
	// last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 15 {
		return 0, errors.New("short /proc/PID/stat")
	}
	var ticks int64
	for _, s := range f[11:15] { // utime stime cutime cstime (fields 14-17)
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on Linux.
const clockTicks = 100

// hwm returns VmHWM, the peak resident memory so far, in bytes.
func (p *process) hwm() (int64, error) {
	b, err := vmHWM(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	return int64(b), err
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
