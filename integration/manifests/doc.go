// Package manifests tests deploy/'s manifests against a real kube-apiserver
// (package apiserver): they are accepted by validation and admission
// (server-side dry run), and the agent runs with exactly the RBAC and
// capabilities they grant.
//
// The tests carry the build tag "integration", need root, etcd and
// kube-apiserver, and skip otherwise:
//
//	sudo go test -tags integration ./integration/manifests/
package manifests
