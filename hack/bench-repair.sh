#!/usr/bin/env bash
# Repair benchmark: how long nftproxy takes to repair each kind of change
# somebody else makes to its table (an element deleted, a chain flushed, a
# rule added, the table deleted, a map flushed; another table changed:
# nothing to do), at 10,000 Services x 10 endpoints by default. Needs root;
# works only in a network namespace it creates and removes.
# Quick run: make bench-repair BENCH_ARGS="-services 1000 -runs 3"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "bench-repair: needs root (network namespaces, nftables)" >&2
	exit 1
fi
mkdir -p bin
go build -o bin/repairbench ./integration/repairbench
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
exec nice -n 10 bin/repairbench ${BENCH_ARGS:-}
