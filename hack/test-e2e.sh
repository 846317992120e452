#!/usr/bin/env bash
# End-to-end tests: the real nftproxy binary against a real kube-apiserver
# and etcd, all inside network namespaces the tests create. Needs root and
# etcd (Debian: etcd-server); builds kube-apiserver once into the user's
# cache (hack/kube-apiserver.sh), which takes many minutes the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "test-e2e: not root: skipping the end-to-end tests" >&2
	exit 0
fi
. hack/lib.sh
need_etcd test-e2e
hack/build.sh >&2
export NFTPROXY="$PWD/bin/nftproxy"
KUBE_APISERVER="$(hack/kube-apiserver.sh)"
export KUBE_APISERVER
# Every integration package that uses the API server (hack/e2e-packages.sh).
go test -tags integration -count=1 -timeout 30m $(hack/e2e-packages.sh)
