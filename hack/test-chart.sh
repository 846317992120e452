#!/usr/bin/env bash
# `make test-chart`: the Helm chart's tests (deploy/chart_test.go) with the
# helm and kubectl this repository pins, built once into the cache
# (hack/helm.sh, hack/kube-binary.sh): with default values the chart renders
# the objects of `kubectl kustomize deploy/` field by field (and of
# deploy/kubeadm with kubeProxyConfigMap), bad values fail with clear
# errors, helm lint passes. No root, no cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
HELM="$(hack/helm.sh)"
KUBECTL="$(hack/kube-binary.sh kubectl)"
export HELM KUBECTL
go test -count=1 -v -run 'Chart|Kustomize' ./deploy
