// Package lab builds small real-kernel labs for testing a service proxy.
//
// A lab is a set of network namespaces wired with veth pairs: a node that
// routes, an external client and backend pods. The proxy under test programs
// nftables inside the node namespace; the lab sends real packets through it.
//
// # Safety
//
// Everything the package creates lives in network namespaces it creates
// itself, and every namespace is removed by t.Cleanup, also when the test
// fails. Links are created directly inside their namespaces ("ip -n"), so the
// host namespace is never modified. Creating namespaces needs root: NewNS
// skips the test with the reason when not root.
//
// # Namespaces
//
// NewNS creates a namespace; NS.Exec runs a command in it; NS.Do runs Go code
// on a thread switched into it, so sockets created there belong to it;
// Connect and NS.Route wire namespaces together.
//
// # Traffic
//
// Serve (ServeTCP, ServeUDP, ServeSCTP) starts a server in a namespace that
// answers every request with "<name> <client-ip>", the client address as the
// server saw it; ParseReply splits it. NS.Request (RequestTCP, RequestUDP,
// RequestSCTP) sends one request with a bounded timeout. Errors keep the
// kernel's errno: errors.Is(err, syscall.ECONNREFUSED) holds for a TCP reset
// and for an ICMP port unreachable on UDP; IsTimeout reports a timeout.
//
// # Cluster
//
// NewCluster builds the usual topology: a Node routing between an external
// Client on 198.51.100.0/24 (fd00:198:51:100::/64) and backend pods in
// 10.244.0.0/16 (fd00:10:244::/48), one link per pod.
//
// # Running
//
// The package compiles unprivileged; its own tests use the build tag
// "integration" and must run as root:
//
//	sudo go test -tags integration ./integration/lab/
package lab
