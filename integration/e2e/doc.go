// Package e2e runs the real nftproxy binary against a real kube-apiserver
// and proves with real packets that traffic follows the API objects.
//
// # Environment
//
//	env := e2e.New(t, 3)               // lab cluster with 3 backends, API server in its node namespace
//	proxy := env.StartProxy(t)          // bin/nftproxy in the node namespace
//	env.Create(t, e2e.Service("web", "10.96.1.10", e2e.TCPPort("http", 80, 0)))
//	env.Create(t, e2e.Slice("web", 8080, env.Lab.Backends[0].IPv4))
//	env.Eventually(t, "web answers", func() error { ... })
//
// New builds a lab.Cluster (package lab), starts etcd and kube-apiserver
// in its node namespace (package apiserver), creates the Node object named
// NodeName with the node's addresses and the namespace Namespace, and
// serves TCP on BackendPort in every backend, each answering with its own
// namespace name. StartProxy runs nftproxy under "ip netns exec" in the node
// namespace with --kubeconfig and --hostname-override; the returned
// lab.Process is stopped at cleanup and can be stopped earlier (SIGTERM) to
// test restarts.
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
