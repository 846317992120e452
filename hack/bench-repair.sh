#!/usr/bin/env bash
# Repair benchmark: how long nftproxy takes to repair each kind of change
# somebody else makes to its table (an element deleted, a chain flushed, a
# rule added, the table deleted, a map flushed; another table changed:
# nothing to do), at 10,000 Services x 10 endpoints by default. Needs root;
# works only in a network namespace it creates and removes.
# Quick run: make bench-repair BENCH_ARGS="-services 1000 -runs 3"
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
need_root bench-repair "network namespaces, nftables"
run_bench repairbench ./integration/repairbench
