#!/usr/bin/env bash
# Sync benchmark: compile, first full sync, incremental syncs, memory and
# kernel objects for synthetic clusters, next to kube-proxy's nftables shape.
# Needs root; works only in network namespaces it creates and removes.
# Quick run: make bench BENCH_ARGS="-sizes 1000x10 -runs 3"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root (network namespaces, nftables)" >&2
	exit 1
fi
mkdir -p bin
go build -o bin/bench ./cmd/bench
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
exec nice -n 10 bin/bench sync ${BENCH_ARGS:-}
