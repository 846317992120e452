// Package conntrack deletes conntrack entries that would keep UDP clients
// on a dead path, over ctnetlink (no conntrack binary).
//
// # Why
//
// A UDP "connection" lives in conntrack for as long as the client keeps
// sending, so a DNS resolver that reuses its source port stays DNATed to an
// endpoint long after that endpoint went away. Likewise, packets to a UDP
// Service that had no endpoint create entries that are not DNATed at all,
// and the Service's first endpoint would never see that client.
//
// # What
//
// After each sync the Hook compares the previous snapshot with the current
// one (Stale) and deletes, as kube-proxy does:
//
//   - UDP entries to a Service address (ClusterIP, externalIP,
//     load-balancer IP) and port, or to its NodePort, DNATed to an endpoint
//     that is no longer one of the Service's;
//   - UDP entries to a Service address and port, or its NodePort, when the
//     Service just got its first endpoint.
//
// TCP and SCTP need nothing: their connections end when the endpoint does.
//
// # Timeouts
//
// SetTimeouts writes the configured conntrack TCP timeouts (established,
// CLOSE_WAIT) to their sysctls at start, as kube-proxy does, each only when
// it differs from the current value.
package conntrack
