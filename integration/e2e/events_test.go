//go:build integration

package e2e_test

import (
	"testing"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// TestBadServiceGetsWarning creates a Service the API server accepts but
// nftproxy cannot program: its external IP and port are another Service's
// ClusterIP and port. It gets a Warning Event naming the field, and the
// Services around it, created before and after, are still served.
func TestBadServiceGetsWarning(t *testing.T) {
	env := e2e.New(t, 2)
	env.StartProxy(t)
	b := env.Lab.Backends
	env.CreateClash(t, "10.96.5.10", "10.96.5.20")
	env.Create(t, e2e.Slice("web-clash", "http", b[1].IPv4))
	env.Create(t, e2e.Service("shop", "10.96.5.30", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("shop", "http", b[1].IPv4))

	e2e.Eventually(t, "Warning event on web-clash", env.Warned("web-clash", "spec.externalIPs[0]"))
	e2e.Eventually(t, "shop, created after, answered by pod 1", env.AnsweredBy("10.96.5.30:80", 3, b[1].Name))
	e2e.Eventually(t, "web still answered by pod 0", env.AnsweredBy("10.96.5.10:80", 5, b[0].Name))
	e2e.Eventually(t, "web-clash's own ClusterIP served", env.AnsweredBy("10.96.5.20:80", 3, b[1].Name))
}
