// Package e2e runs the real nftproxy binary against a real kube-apiserver
// and proves with real packets that traffic follows the API objects.
//
// # Environment
//
//	env := e2e.New(t, 3)       // lab cluster with 3 pods, API server in its node namespace
//	proxy := env.StartProxy(t) // nftproxy in the node namespace
//	pod := env.Lab.Backends[0]
//	env.Create(t, e2e.Service("web", "10.96.1.10", e2e.TCPPort("http", 80, 0)))
//	env.Create(t, e2e.Slice("web", "http", pod.IPv4))
//	e2e.Eventually(t, "web answers", env.AnsweredBy("10.96.1.10:80", 5, pod.Name))
//	proxy.Stop()               // SIGTERM; returns the exit status
//
// New builds a lab.Cluster (package lab) whose node has a default route out
// an uplink namespace (rejects happen in the forward hook, which needs a
// route), starts etcd and kube-apiserver in the node namespace (package
// apiserver), creates the Node object named
// NodeName with the node's addresses and the namespace Namespace, and
// serves TCP on BackendPort in every backend, each answering with its own
// namespace name. StartProxy runs nftproxy under "ip netns exec" in the node
// namespace with --kubeconfig and --hostname-override; the returned
// lab.Process is stopped at cleanup and can be stopped earlier (SIGTERM) to
// test restarts. A proxy that exits before anyone stopped it fails the test.
//
// Objects: Service, TCPPort, LoadBalancer and Slice build them; Env's
// Create, Update, SetIngress, DeleteService and DeleteSlice write them.
// Checks for Eventually: AnsweredBy, Refused, Unserved.
//
// Main runs the same harness from a command (make demo, hack/e2e-scale.sh).
//
// The nftproxy binary is $NFTPROXY when set (hack/test-e2e.sh builds
// bin/nftproxy), else it is built once per test process.
//
// # Polling
//
// Changes take effect asynchronously (informers, the rate-limited sync
// loop), so tests poll with Eventually, bounded by PollTimeout, and never
// assert on timing.
//
// # Running
//
// The tests carry the build tag "integration" and need root, etcd and
// kube-apiserver (see hack/kube-apiserver.sh); they skip otherwise:
//
//	sudo hack/test-e2e.sh
package e2e
