#!/usr/bin/env bash
# Data-plane benchmark: connect latency of new TCP connections through a
# ClusterIP with 1 to 50,000 Services programmed, next to a direct
# connection and to kube-proxy's nftables shape. Needs root; works only in
# network namespaces it creates and removes.
# Quick run: make bench-dataplane BENCH_ARGS="-services 1,1000 -conns 500 -runs 1"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "bench-dataplane: needs root (network namespaces, nftables)" >&2
	exit 1
fi
mkdir -p bin
go build -o bin/bench ./cmd/bench
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
exec nice -n 10 bin/bench dataplane ${BENCH_ARGS:-}
