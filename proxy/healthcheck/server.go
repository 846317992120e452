package healthcheck

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/nftproxy/nftproxy/proxy/model"
)

// Config says where servers listen and how healthy the proxy is.
type Config struct {
	// Addrs returns the addresses servers listen on for node (the NodePort
	// addresses), asked at every sync since they follow the Node object.
	// nil, or no address, means every address of the node.
	Addrs func(node model.Node) []netip.Addr
	// Healthy reports whether the proxy itself is healthy (its /healthz);
	// nil means always.
	Healthy func() bool
	Logger  klog.Logger
}

// Hook runs one HTTP server per health-check node port.
type Hook struct {
	cfg     Config
	addrs   []netip.Addr // what the running servers listen on
	mu      sync.Mutex
	state   map[uint16]service // guarded by mu; read by handlers
	servers map[uint16]*server
}

// NewHook returns a Hook with no servers running.
func NewHook(cfg Config) *Hook {
	if cfg.Healthy == nil {
		cfg.Healthy = func() bool { return true }
	}
	return &Hook{cfg: cfg, state: map[uint16]service{}, servers: map[uint16]*server{}}
}

// AfterSync starts servers for new health-check ports, stops those no
// Service wants any more, and updates the endpoint counts.
func (h *Hook) AfterSync(_, cur *model.Snapshot, node model.Node) {
	want := wanted(cur, node.Name)
	h.mu.Lock()
	h.state = want
	h.mu.Unlock()
	if addrs := h.listenAddrs(node); !slices.Equal(addrs, h.addrs) {
		h.Close() // the node's addresses changed: listen again on the new ones
		h.addrs = addrs
	}
	for port, srv := range h.servers {
		if _, ok := want[port]; !ok {
			srv.close()
			delete(h.servers, port)
		}
	}
	for port := range want {
		if _, ok := h.servers[port]; ok {
			continue
		}
		srv, err := h.start(port)
		if err != nil {
			h.cfg.Logger.Error(err, "health-check server failed to start", "port", port)
			continue
		}
		h.servers[port] = srv
	}
}

func (h *Hook) listenAddrs(node model.Node) []netip.Addr {
	if h.cfg.Addrs == nil {
		return nil
	}
	return h.cfg.Addrs(node)
}

// server is one health-check port's HTTP server and its listeners.
type server struct {
	http      *http.Server
	listeners []net.Listener
}

// close stops the server. It closes the listeners itself: http.Server
// closes only those its Serve goroutines have begun serving, and one that
// has not yet would go on accepting until it does.
func (s *server) close() {
	_ = s.http.Close()
	for _, l := range s.listeners {
		_ = l.Close()
	}
}

// start listens on port on every address of h.addrs (all addresses when
// there are none); one server serves all its listeners.
func (h *Hook) start(port uint16) (*server, error) {
	addrs := []string{":" + strconv.Itoa(int(port))}
	if len(h.addrs) > 0 {
		addrs = addrs[:0]
		for _, a := range h.addrs {
			addrs = append(addrs, netip.AddrPortFrom(a, port).String())
		}
	}
	srv := &http.Server{Handler: handler{h, port}, ReadHeaderTimeout: 5 * time.Second}
	var listeners []net.Listener
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return nil, fmt.Errorf("listen on %s: %w", a, err)
		}
		listeners = append(listeners, l)
	}
	for _, l := range listeners {
		go func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				h.cfg.Logger.Error(err, "health-check server stopped", "address", l.Addr().String())
			}
		}()
	}
	return &server{http: srv, listeners: listeners}, nil
}

// Close stops every server. Call it after the last AfterSync: both run on
// the agent's sync goroutine.
func (h *Hook) Close() {
	for port, srv := range h.servers {
		srv.close()
		delete(h.servers, port)
	}
}

type handler struct {
	h    *Hook
	port uint16
}

// ServeHTTP answers like kube-proxy's service health server.
func (hd handler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	hd.h.mu.Lock()
	svc, ok := hd.h.state[hd.port]
	hd.h.mu.Unlock()
	if !ok {
		http.Error(w, "no Service", http.StatusServiceUnavailable)
		return
	}
	healthy := hd.h.cfg.Healthy()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(svc.localEndpoints))
	if svc.localEndpoints > 0 && healthy {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprint(w, body(svc, healthy))
}

// body is kube-proxy's JSON, laid out as kube-proxy writes it.
func body(s service, healthy bool) string {
	return fmt.Sprintf("{\n\t\"service\": {\n\t\t\"namespace\": %q,\n\t\t\"name\": %q\n\t},\n\t\"localEndpoints\": %d,\n\t\"serviceProxyHealthy\": %v\n}",
		s.namespace, s.name, s.localEndpoints, healthy)
}
