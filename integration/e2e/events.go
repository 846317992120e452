package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateClash creates the Service web at webIP, port 80, with pod 0 as its
// endpoint, waits until pod 0 answers there, and creates web-clash at
// clashIP: a Service the API server accepts but nftproxy cannot program,
// as its external IP and port are web's ClusterIP and port. nftproxy
// publishes a Warning Event about it (Warned).
func (e *Env) CreateClash(t testing.TB, webIP, clashIP string) {
	t.Helper()
	b := e.Lab.Backends
	e.Create(t, Service("web", webIP, TCPPort("http", 80, 0)))
	e.Create(t, Slice("web", "http", b[0].IPv4))
	Eventually(t, "web answered by pod 0", e.AnsweredBy(webIP+":80", 3, b[0].Name))
	clash := Service("web-clash", clashIP, TCPPort("http", 80, 0))
	clash.Spec.ExternalIPs = []string{webIP}
	e.Create(t, clash)
}

// Warned returns a check, for Eventually, that a Warning Event about the
// Service names field in its message ("" for any message).
func (e *Env) Warned(service, field string) func() error {
	return func() error {
		list, err := e.Kube.CoreV1().Events(Namespace).List(e.Ctx, metav1.ListOptions{
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
		return fmt.Errorf("no Warning naming %q among %d events %q", field, len(seen), seen)
	}
}
