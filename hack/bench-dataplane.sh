#!/usr/bin/env bash
# Data-plane benchmark: connect latency of new TCP connections through a
# ClusterIP with 1 to 50,000 Services programmed, next to a direct
# connection and to kube-proxy's nftables shape. Needs root; works only in
# network namespaces it creates and removes.
# Quick run: make bench-dataplane BENCH_ARGS="-services 1,1000 -conns 500 -runs 1"
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
need_root bench-dataplane "network namespaces, nftables"
run_bench bench ./cmd/bench dataplane
