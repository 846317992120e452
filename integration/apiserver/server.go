package apiserver

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// ServiceCIDR and ServiceCIDRv6 are the API server's
// --service-cluster-ip-range, dual-stack with IPv4 primary: ClusterIPs of
// test Services come from them, and the API server makes them its default
// ServiceCIDR, "kubernetes".
var (
	ServiceCIDR   = netip.MustParsePrefix("10.96.0.0/16")
	ServiceCIDRv6 = netip.MustParsePrefix("fd00:96::/108")
)

// Addresses inside the namespace, on its loopback.
const (
	Address    = "127.0.0.1:6443"
	etcdClient = "http://127.0.0.1:2379"
	etcdPeer   = "http://127.0.0.1:2380"
)

// readyTimeout bounds the wait for /readyz; a loaded 2-core machine may
// take a while to start kube-apiserver.
const readyTimeout = 3 * time.Minute

// Server is a running kube-apiserver with its etcd.
type Server struct {
	NS *lab.NS
	// Config reaches the API server from the test process: its Dial
	// creates sockets inside NS. QPS and Burst are high: tests create many
	// objects.
	Config *rest.Config
	Client kubernetes.Interface
	// Kubeconfig is the path of a kubeconfig file for a process running
	// inside NS (server https://127.0.0.1:6443, the same credentials).
	Kubeconfig string

	apiserver, etcd *lab.Process
	args            []string // kube-apiserver's command line, for StartAPIServer
	dir             string
	starts          int // kube-apiserver starts, to name each log
}

// Options adjust the servers for a caller whose needs differ from the
// tests'; the zero value is what Start runs.
type Options struct {
	// EtcdArgs and APIServerArgs are appended to etcd's and
	// kube-apiserver's command lines: a flag given again takes the later
	// value.
	EtcdArgs, APIServerArgs []string
}

// Start runs etcd and kube-apiserver inside ns and returns once the API
// server is ready; both stop at test cleanup. See the package doc.
func Start(t testing.TB, ns *lab.NS) *Server {
	t.Helper()
	return StartWith(t, ns, Options{})
}

// StartWith is Start with the servers adjusted by o.
func StartWith(t testing.TB, ns *lab.NS, o Options) *Server {
	t.Helper()
	etcd := etcdBinary(t)
	kas := kubeAPIServerBinary(t)
	dir := t.TempDir()
	p, err := newPKI()
	if err != nil {
		t.Fatal(err)
	}
	files, err := p.files(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{NS: ns, Config: restConfig(ns, p), Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if err := writeKubeconfig(s.Kubeconfig, p); err != nil {
		t.Fatal(err)
	}
	if s.Client, err = kubernetes.NewForConfig(s.Config); err != nil {
		t.Fatalf("client: %v", err)
	}
	s.etcd = ns.StartLogged(t, "etcd", filepath.Join(dir, "etcd.log"), append(etcdArgs(etcd, dataDir(t)), o.EtcdArgs...)...)
	s.args, s.dir = append(apiserverArgs(kas, dir, files), o.APIServerArgs...), dir
	s.StartAPIServer(t)
	return s
}

// StopAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after 10 s);
// etcd keeps running, so StartAPIServer brings the same state back. For
// tests of a proxy that loses the API server.
func (s *Server) StopAPIServer(t testing.TB) {
	t.Helper()
	_ = s.apiserver.Stop() // the exit status of a stopped server says nothing
}

// StartAPIServer starts kube-apiserver with the same flags, each start with
// its own log, and waits until it is ready.
func (s *Server) StartAPIServer(t testing.TB) {
	t.Helper()
	s.starts++
	log := filepath.Join(s.dir, fmt.Sprintf("kube-apiserver-%d.log", s.starts))
	s.apiserver = s.NS.StartLogged(t, "kube-apiserver", log, s.args...)
	s.waitReady(t)
}

// dataDir returns a directory on tmpfs for etcd's data, when there is one:
// etcd syncs every write, and the scale tests write tens of thousands of
// objects.
func dataDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "nftproxy-etcd-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func etcdArgs(bin, data string) []string {
	return []string{bin,
		"--name=e2e",
		"--data-dir=" + data,
		"--listen-client-urls=" + etcdClient,
		"--advertise-client-urls=" + etcdClient,
		"--listen-peer-urls=" + etcdPeer,
		"--initial-advertise-peer-urls=" + etcdPeer,
		"--initial-cluster=e2e=" + etcdPeer,
		"--logger=zap",
	}
}

// apiserverArgs: certificate authentication (the client certificate is in
// system:masters), RBAC for everyone else, and no endpoint reconciler: it
// would try to publish 127.0.0.1 as the "kubernetes" Service's endpoint.
func apiserverArgs(bin, dir string, files map[string]string) []string {
	host, port, _ := net.SplitHostPort(Address)
	args := []string{bin,
		"--etcd-servers=" + etcdClient,
		"--bind-address=" + host,
		"--advertise-address=" + host,
		"--secure-port=" + port,
		"--cert-dir=" + dir,
		"--service-cluster-ip-range=" + ServiceCIDR.String() + "," + ServiceCIDRv6.String(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}
	for flag, path := range files {
		args = append(args, fmt.Sprintf("--%s=%s", flag, path))
	}
	return args
}

// waitReady polls /readyz until it answers ok, failing the test early when
// a process exits.
func (s *Server) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range []*lab.Process{s.etcd, s.apiserver} {
			if done, _ := p.Exited(); done {
				t.Fatal(p.Failure())
			}
		}
		if last = s.ready(); last == nil {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("kube-apiserver not ready after %v: %v", readyTimeout, last)
}

// ready asks /readyz once.
func (s *Server) ready() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body, err := s.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("readyz: %w: %s", err, body)
	}
	return nil
}
