// Package apiserver runs a real kube-apiserver and etcd inside a network
// namespace for end-to-end tests, and gives the test a client for it.
//
// # Starting
//
//	c := lab.NewCluster(t, 2)
//	api := apiserver.Start(t, c.Node)
//	api.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
//	c.Node.StartLogged(t, "nftproxy", logPath, nftproxy, "--kubeconfig="+api.Kubeconfig, "--hostname-override=node-1")
//
// Package e2e wraps this with the Node object, backends and nftproxy.
//
// Start launches etcd and kube-apiserver inside ns, listening on ns's
// loopback only (127.0.0.1:2379 and 127.0.0.1:6443), waits until /readyz
// answers ok, and stops both at test cleanup (before lab removes the
// namespace). StopAPIServer and StartAPIServer take kube-apiserver away
// and bring it back while etcd keeps the state. Running them in the node namespace puts the API server
// beside the proxy, as on a control-plane node; the host namespace is never
// modified.
//
// The test process reaches the API server through Config and Client: their
// Dial creates each socket inside ns (lab's NS.Do), so 127.0.0.1 means ns's
// loopback. Kubeconfig is a file with the same server and credentials for a
// process started inside ns, such as nftproxy under "ip netns exec".
//
// # What runs
//
//   - etcd from PATH (Debian's etcd-server package), its data on tmpfs.
//   - kube-apiserver from $KUBE_APISERVER, else hack/kube-apiserver.sh,
//     which builds the pinned version once into the user's cache.
//   - Certificates and the service-account key are generated here with Go's
//     crypto: a CA, a serving certificate for 127.0.0.1 and localhost, and a
//     client certificate in group system:masters, used by every client.
//   - No controller manager or scheduler: tests create EndpointSlices
//     directly. --service-cluster-ip-range is ServiceCIDR and ServiceCIDRv6
//     (dual-stack), so Services with a ClusterIP from 10.96.0.0/16 or
//     fd00:96::/108 are accepted, and the API server creates the default
//     ServiceCIDR "kubernetes" with both.
//
// Start skips the test when not root (lab) or when etcd is not installed.
// On failure, the tail of both logs is written to the test log.
package apiserver
