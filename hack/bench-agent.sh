#!/usr/bin/env bash
# Agent benchmark: the nftproxy binary and upstream kube-proxy (nftables
# mode, the Kubernetes version of hack/tools/kubernetes), one at a time,
# each in a node namespace of its own, against the same real kube-apiserver
# and etcd: cold full sync, one-Service changes, a churn of 50 EndpointSlice
# updates a second for a minute; CPU, syncs, network programming latency,
# peak memory (docs/benchmarks.md). Needs root; works only in network
# namespaces it creates and removes. The first run builds kube-apiserver and
# kube-proxy into ~/.cache/nftproxy (minutes).
# Quick run: make bench-agent BENCH_ARGS="-sizes 1000x10 -runs 1 -churn-for 10s"
# Loading only: BENCH_ARGS="-sizes 50000x5 -load-only" (new Services go
# straight into etcd, cmd/bench/agent_etcd.go).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
need_root bench-agent "network namespaces, nftables"
need_etcd bench-agent
hack/build.sh >&2
KUBE_APISERVER="$(hack/kube-apiserver.sh)"
export KUBE_APISERVER
kube_proxy="$(hack/kube-binary.sh kube-proxy)"
run_bench bench ./cmd/bench agent -nftproxy bin/nftproxy -kube-proxy "$kube_proxy"
