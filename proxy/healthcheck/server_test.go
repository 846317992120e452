package healthcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/proxy/model"
)

var loopback = netip.MustParseAddr("127.0.0.1")

func freePort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// snapshot has Service demo/lb (externalTrafficPolicy Local, health check
// on port) with endpoints on the given nodes, all ready.
func snapshot(port uint16, nodes ...string) *model.Snapshot {
	svc := model.Service{Namespace: "demo", Name: "lb", Type: model.LoadBalancer, ExternalLocal: true, HealthCheckNodePort: port}
	s := model.EndpointSlice{Namespace: "demo", Name: "lb-1", Service: "lb", AddressType: model.IPv4}
	for i, n := range nodes {
		a := netip.AddrFrom4([4]byte{10, 244, byte(i), 1})
		s.Endpoints = append(s.Endpoints, model.Endpoint{Addresses: []netip.Addr{a}, Ready: true, NodeName: n})
	}
	return &model.Snapshot{Services: []model.Service{svc}, Slices: []model.EndpointSlice{s}}
}

type answer struct {
	code   int
	weight string
	body   map[string]any
}

func get(t *testing.T, port uint16) (answer, error) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, weight: resp.Header.Get("X-Load-Balancing-Endpoint-Weight")}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		t.Fatalf("body %q: %v", raw, err)
	}
	return a, nil
}

func want(code int, local float64, healthy bool) answer {
	return answer{code: code, weight: fmt.Sprint(local), body: map[string]any{
		"service":             map[string]any{"namespace": "demo", "name": "lb"},
		"localEndpoints":      local,
		"serviceProxyHealthy": healthy,
	}}
}

func TestHook(t *testing.T) {
	port := freePort(t)
	healthy := true
	h := NewHook(Config{Addrs: func(model.Node) []netip.Addr { return []netip.Addr{loopback} }, Healthy: func() bool { return healthy }, Logger: klog.Background()})
	defer h.Close()
	node := model.Node{Name: "node-1"}
	steps := []struct {
		name    string
		snap    *model.Snapshot
		healthy bool
		want    *answer // nil: nothing listens
	}{
		{"two local endpoints", snapshot(port, "node-1", "node-1", "node-2"), true, ptr(want(200, 2, true))},
		{"none local", snapshot(port, "node-2"), true, ptr(want(503, 0, true))},
		{"proxy unhealthy", snapshot(port, "node-1"), false, ptr(want(503, 1, false))},
		{"Service gone", &model.Snapshot{}, true, nil},
		{"Service back", snapshot(port, "node-1"), true, ptr(want(200, 1, true))},
	}
	for _, st := range steps {
		healthy = st.healthy
		h.AfterSync(nil, st.snap, node)
		got, err := get(t, port)
		switch {
		case st.want == nil && err == nil:
			t.Errorf("%s: got %+v, want nothing listening", st.name, got)
		case st.want != nil && err != nil:
			t.Errorf("%s: %v", st.name, err)
		case st.want != nil:
			if diff := cmp.Diff(*st.want, got, cmp.AllowUnexported(answer{})); diff != "" {
				t.Errorf("%s: (-want +got):\n%s", st.name, diff)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestHookFollowsNodeAddresses checks that servers listen only on the
// addresses Addrs gives for the Node, and move when the Node's do.
func TestHookFollowsNodeAddresses(t *testing.T) {
	port := freePort(t)
	h := NewHook(Config{Addrs: func(n model.Node) []netip.Addr { return n.IPs }, Logger: klog.Background()})
	defer h.Close()
	first, second := netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")
	snap := snapshot(port, "node-1")
	for _, step := range []struct{ on, off netip.Addr }{{first, second}, {second, first}} {
		h.AfterSync(nil, snap, model.Node{Name: "node-1", IPs: []netip.Addr{step.on}})
		if !listening(step.on, port) {
			t.Errorf("node address %s: nothing listens on it", step.on)
		}
		if listening(step.off, port) {
			t.Errorf("node address %s: still listening on %s", step.on, step.off)
		}
	}
}

func listening(a netip.Addr, port uint16) bool {
	c, err := net.DialTimeout("tcp", netip.AddrPortFrom(a, port).String(), 2*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
