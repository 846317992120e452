#!/usr/bin/env bash
# Prints the path of a kube-apiserver binary for the end-to-end tests and
# the demo, building it first when the cache does not have it yet
# (hack/kube-binary.sh kube-apiserver). KUBE_APISERVER=/path skips all of this.
set -euo pipefail
if [ -n "${KUBE_APISERVER:-}" ]; then
	echo "$KUBE_APISERVER"; exit 0
fi
exec "$(dirname "$0")/kube-binary.sh" kube-apiserver
