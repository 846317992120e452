#!/usr/bin/env bash
# Runs the real-kernel integration tests. They need root (network
# namespaces, nftables) and skip with a message otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "test-integration: not root: the integration tests will skip" >&2
fi
# The packages that need a real kube-apiserver run in hack/test-e2e.sh.
go test -tags integration -count=1 -timeout 20m $(hack/e2e-packages.sh --others)
