// Package agentfailure runs the real nftproxy binary against a real
// kube-apiserver (package e2e) and makes things go wrong around it:
//
//   - the API server stops for a minute: traffic keeps flowing on the rules
//     already programmed, and changes flow again when it is back
//     (outage_test.go);
//   - a storm of EndpointSlice updates: syncs stay at one per
//     minSyncPeriod, memory stays flat, and the rules end exactly as the
//     last objects say (storm_test.go);
//   - objects at the API's limits: programmed, never a crash, never
//     blocking other Services (extreme_test.go).
//
// Kernel-level failures (a rejected transaction, kill -9 during a commit)
// are in package failure, which needs no API server.
//
// The tests carry the build tag "integration", need root, etcd and
// kube-apiserver, and skip otherwise (hack/test-e2e.sh runs them):
//
//	sudo go test -tags integration ./integration/agentfailure/
package agentfailure
