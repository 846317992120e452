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
// # Why not github.com/ti-mo/conntrack
//
// ti-mo/conntrack v0.6.0 (built on mdlayher/netlink) can do this job: a
// dump per family (DumpFilter with Family), our Target.Matches on each
// flow, a Delete by original tuple. It would replace netlink.go and flow.go
// (about 250 lines). Measured in a namespace holding 100,000 UDP entries
// (kernel 6.18, 2 cores; a dump of both families and the delete of the
// 1,000 entries one Target matches; medians of 5, two runs on a shared
// machine): 454 and 518 ms, 172 MB allocated, 3.1M allocations with this
// package; 505 and 701 ms, 221 MB, 3.5M allocations with the library,
// which decodes every attribute of every flow (counters, timestamps,
// protocol state). At 10,000 entries the time is within 10% and
// the library allocates 29% more. Its Filter has family, mark, status and
// zone, not the original tuple, so it cannot ask the kernel for only the
// UDP flows to one Service (ctnetlink's CTA_FILTER with
// CTA_FILTER_ORIG_FLAGS), which this package does not do yet either.
//
// # Timeouts
//
// SetTimeouts writes the configured conntrack TCP timeouts (established,
// CLOSE_WAIT) to their sysctls at start, as kube-proxy does, each only when
// it differs from the current value.
package conntrack
