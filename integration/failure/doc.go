// Package failure tests how nftproxy behaves when the kernel side goes
// wrong, with a real kernel in network namespaces and no API server:
//
//   - a transaction the kernel rejects leaves the previous ruleset byte for
//     byte, is reported, and the next sync recovers (rejected_test.go);
//   - kill -9 during a commit leaves the old or the new ruleset, never a
//     mix, and the next run converges (kill_test.go);
//   - the binary programs the kernel with exactly the capabilities the
//     DaemonSet grants, and not without them (capabilities_test.go).
//
// Failures around the API server are in package agentfailure.
//
// The tests carry the build tag "integration", need root, and skip
// otherwise:
//
//	sudo go test -tags integration ./integration/failure/
package failure
