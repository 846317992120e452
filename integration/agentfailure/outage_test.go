//go:build integration

package agentfailure

import (
	"context"
	"fmt"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nftproxy/nftproxy/integration/e2e"
)

// outage is how long the API server stays down; outageProbe is the pause
// between two checks that traffic still flows meanwhile.
const (
	outage      = 60 * time.Second
	outageProbe = 5 * time.Second
	// resumeTimeout bounds the wait for nftproxy to follow changes after
	// the outage. client-go's reflectors retry a failed list or watch with
	// a backoff that grows to 30 s with up to 100% jitter, so after a
	// minute of failures the next attempt may come a minute later.
	resumeTimeout = 3 * time.Minute
)

// TestAPIServerOutage stops kube-apiserver and keeps it down for a minute
// (etcd keeps running) while nftproxy runs: traffic keeps flowing on the rules already
// programmed and nftproxy keeps running. A client that keeps retrying a
// change during the outage (as a controller would) gets it through when
// the API server is back, and a change made right after the restart is
// applied too: nftproxy's watches came back.
func TestAPIServerOutage(t *testing.T) {
	env := e2e.New(t, 3)
	agent := startAgent(t, env)
	b := env.Lab.Backends
	web, api := "10.96.8.10:80", "10.96.8.20:80"
	env.Create(t, e2e.Service("web", "10.96.8.10", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("web", "http", b[0].IPv4))
	e2e.Eventually(t, "web answered by pod 0", env.AnsweredBy(web, 5, b[0].Name))

	env.API.StopAPIServer(t)
	start := time.Now()
	retried := make(chan error, 1)
	go func() { retried <- retryUntilUp(env, e2e.Slice("web", "http", b[1].IPv4, b[2].IPv4)) }()
	for time.Since(start) < outage {
		if name, err := env.Ask(web); err != nil || name != b[0].Name {
			t.Fatalf("%v into the outage: web answered by %q, %v; want %s", time.Since(start).Round(time.Second), name, err, b[0].Name)
		}
		if done, _ := agent.Exited(); done {
			t.Fatal(agent.Failure())
		}
		time.Sleep(outageProbe)
	}

	restart := time.Now()
	env.API.StartAPIServer(t)
	t.Logf("API server down %v, ready %v after its restart", restart.Sub(start).Round(time.Second), time.Since(restart).Round(time.Second))
	if err := <-retried; err != nil {
		t.Fatalf("the change retried during the outage: %v", err)
	}
	env.Create(t, e2e.Service("api", "10.96.8.20", e2e.TCPPort("http", 80, 0)))
	env.Create(t, e2e.Slice("api", "http", b[0].IPv4))
	e2e.EventuallyWithin(t, "the change made during the outage is applied", resumeTimeout, env.AnsweredBy(web, 20, b[1].Name, b[2].Name))
	e2e.EventuallyWithin(t, "a Service created after the outage answers", resumeTimeout, env.AnsweredBy(api, 5, b[0].Name))
	t.Logf("both changes applied %v after the API server's restart", time.Since(restart).Round(time.Second))
	if done, _ := agent.Exited(); done {
		t.Fatal(agent.Failure())
	}
}

// retryUntilUp writes want's endpoints into the EndpointSlice of the same
// name the way a controller would during an outage: again and again, every
// second, until the API server takes it (within the outage plus time for
// a restart on a loaded machine).
func retryUntilUp(env *e2e.Env, want *discoveryv1.EndpointSlice) error {
	ctx, cancel := context.WithTimeout(env.Ctx, outage+resumeTimeout)
	defer cancel()
	c := env.Kube.DiscoveryV1().EndpointSlices(want.Namespace)
	for {
		cur, err := c.Get(ctx, want.Name, metav1.GetOptions{})
		if err == nil {
			cur.Endpoints = want.Endpoints
			if _, err = c.Update(ctx, cur, metav1.UpdateOptions{}); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("update %s: %w (last error: %v)", want.Name, ctx.Err(), err)
		case <-time.After(time.Second):
		}
	}
}
