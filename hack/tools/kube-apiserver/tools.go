//go:build tools

// Package tools pins kube-apiserver for `go build` in this module.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
