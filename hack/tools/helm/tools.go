//go:build tools

// Package tools pins the helm command that hack/helm.sh builds, so that `go
// mod tidy` keeps its modules in go.mod and go.sum.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
