package e2e

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nftproxy/nftproxy/integration/apiserver"
	"github.com/nftproxy/nftproxy/integration/lab"
)

const (
	// NodeName is the Node object of the lab's node, nftproxy's
	// --hostname-override.
	NodeName = "node-1"
	// Namespace holds the tests' Services and EndpointSlices.
	Namespace = "e2e"
	// BackendPort is where every backend serves TCP.
	BackendPort = 8080
)

// Env is a lab cluster with an API server in its node namespace.
type Env struct {
	Lab  *lab.Cluster
	API  *apiserver.Server
	Kube kubernetes.Interface
	// Ctx bounds API calls; it ends at test cleanup.
	Ctx context.Context
	dir string
}

// New builds the environment with n backends; see the package doc.
func New(t testing.TB, n int) *Env {
	t.Helper()
	c := lab.NewCluster(t, n)
	addUplink(t, c)
	api := apiserver.Start(t, c.Node)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &Env{Lab: c, API: api, Kube: api.Client, Ctx: ctx, dir: t.TempDir()}
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{"ip", "ip6"} {
				out, _ := c.Node.Exec("nft", "list", "table", f, "kube-proxy")
				t.Logf("nft list table %s kube-proxy in the node namespace:\n%s", f, out)
			}
		}
	})
	for _, b := range c.Backends {
		lab.ServeTCP(t, b.NS, lab.AddrPort(b.IPv4, BackendPort), b.Name)
		lab.ServeTCP(t, b.NS, lab.AddrPort(b.IPv6, BackendPort), b.Name)
	}
	e.Create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}})
	e.Create(t, e.node())
	return e
}

// addUplink gives the node a default route, as a real node has, toward an
// upstream namespace that routes nothing. Without a route, traffic to a
// Service IP never reaches the forward hook where nftproxy rejects it when
// the Service has no endpoints (see integration's TestReject); the uplink
// is not via the client's link, whose ICMP redirects would use up the rate
// limit of the rejects.
func addUplink(t testing.TB, c *lab.Cluster) {
	t.Helper()
	up := lab.NewNS(t, "upstream")
	lab.Connect(t, c.Node, []string{"100.64.0.1/24", "fd00:64::1/64"}, up, []string{"100.64.0.2/24", "fd00:64::2/64"})
	c.Node.Route(t, "default", "100.64.0.2")
	c.Node.Route(t, "default", "fd00:64::2")
}

// node is the Node object of the lab's node, with its addresses.
func (e *Env) node() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: NodeName, Labels: map[string]string{corev1.LabelHostname: NodeName}},
		Spec: corev1.NodeSpec{
			PodCIDR:  lab.ClusterCIDRv4.String(),
			PodCIDRs: []string{lab.ClusterCIDRv4.String(), lab.ClusterCIDRv6.String()},
		},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: e.Lab.NodeIPv4.String()},
			{Type: corev1.NodeInternalIP, Address: e.Lab.NodeIPv6.String()},
		}},
	}
}

// ProxyArgs are the flags StartProxy always passes; the cluster CIDRs make
// traffic from the external client masqueraded, as in a cluster.
func (e *Env) ProxyArgs() []string {
	return []string{
		"--kubeconfig=" + e.API.Kubeconfig,
		"--hostname-override=" + NodeName,
		"--cluster-cidr=" + lab.ClusterCIDRv4.String() + "," + lab.ClusterCIDRv6.String(),
		"--v=2",
	}
}

// StartProxy runs nftproxy in the node namespace with ProxyArgs and extra
// flags. Each call logs to a new file, so a restarted proxy's log is its
// own.
func (e *Env) StartProxy(t testing.TB, extra ...string) *lab.Process {
	t.Helper()
	bin := lab.Nftproxy(t)
	log, err := os.CreateTemp(e.dir, "nftproxy-*.log")
	if err != nil {
		t.Fatal(err)
	}
	_ = log.Close()
	args := append(append([]string{bin}, e.ProxyArgs()...), extra...)
	p := e.Lab.Node.StartLogged(t, "nftproxy", log.Name(), args...)
	go reportExit(t, p)
	return p
}

// reportExit fails the test when p exits before anyone stopped it (a bad
// flag, a crash), so that Eventually gives up at once instead of polling a
// proxy that is gone. t.Errorf is safe from another goroutine; cleanup
// stops p before the test ends, so this never reports after it.
func reportExit(t testing.TB, p *lab.Process) {
	<-p.Done()
	if !p.Stopped() {
		t.Errorf("%v", p.Failure())
	}
}
