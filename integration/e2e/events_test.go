//go:build integration

package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	env.Create(t, e2e.Service("web", "10.96.5.10", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("web", "http", b[0].IPv4))
	e2e.Eventually(t, "web answered by pod 0", env.AnsweredBy("10.96.5.10:80", 3, b[0].Name))

	clash := e2e.Service("web-clash", "10.96.5.20", e2e.TCPPort("http", 80, 0))
	clash.Spec.ExternalIPs = []string{"10.96.5.10"}
	env.Create(t, clash)
	env.Create(t, e2e.Slice("web-clash", "http", b[1].IPv4))
	env.Create(t, e2e.Service("shop", "10.96.5.30", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("shop", "http", b[1].IPv4))

	e2e.Eventually(t, "Warning event on web-clash", warning(env, "web-clash", "spec.externalIPs[0]"))
	e2e.Eventually(t, "shop, created after, answered by pod 1", env.AnsweredBy("10.96.5.30:80", 3, b[1].Name))
	e2e.Eventually(t, "web still answered by pod 0", env.AnsweredBy("10.96.5.10:80", 5, b[0].Name))
	e2e.Eventually(t, "web-clash's own ClusterIP served", env.AnsweredBy("10.96.5.20:80", 3, b[1].Name))
}

// warning returns a check that a Warning Event about the Service names
// field in its message.
func warning(env *e2e.Env, service, field string) func() error {
	return func() error {
		list, err := env.Kube.CoreV1().Events(e2e.Namespace).List(env.Ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Service,involvedObject.name=" + service,
		})
		if err != nil {
			return err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, field) {
				return nil
			}
			seen = append(seen, ev.Type+": "+ev.Message)
		}
		return fmt.Errorf("no Warning naming %s among %d events %q", field, len(seen), seen)
	}
}
