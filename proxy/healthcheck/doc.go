// Package healthcheck serves the health-check node ports of Services with
// externalTrafficPolicy: Local, as kube-proxy does, so that a cloud load
// balancer sends traffic only to nodes that have a local endpoint.
//
// Each such Service gets an HTTP server on its spec.healthCheckNodePort. It
// answers 200 when the node has local endpoints for the Service and the
// proxy is healthy, 503 otherwise, with kube-proxy's JSON body and the
// X-Load-Balancing-Endpoint-Weight header (the number of local endpoints).
// Servers start and stop as Services come and go (Hook.AfterSync).
package healthcheck
