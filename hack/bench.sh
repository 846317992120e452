#!/usr/bin/env bash
# Sync benchmark: compile, first full sync, incremental syncs, memory and
# kernel objects for synthetic clusters, next to kube-proxy's nftables shape.
# Needs root; works only in network namespaces it creates and removes.
# Quick run: make bench BENCH_ARGS="-sizes 1000x10 -runs 3"
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
need_root bench "network namespaces, nftables"
run_bench bench ./cmd/bench sync
