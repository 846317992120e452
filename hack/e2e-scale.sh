#!/usr/bin/env bash
# Measures nftproxy against a real kube-apiserver (integration/scale):
# network programming latency and resident memory. As root; not part of
# `make test`. Arguments go to the program; without any, both figures the
# issue asks for: latency with 1,000 Services, memory with 10,000 x 10.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "e2e-scale: needs root (network namespaces, nftables)" >&2
	exit 1
fi
hack/build.sh >&2
export NFTPROXY="$PWD/bin/nftproxy"
KUBE_APISERVER="$(hack/kube-apiserver.sh)"
export KUBE_APISERVER
go build -o bin/scale ./integration/scale
if [ "$#" -gt 0 ]; then
	exec nice -n 10 bin/scale "$@"
fi
nice -n 10 bin/scale -services 1000 -endpoints 10 -runs 9
nice -n 10 bin/scale -services 10000 -endpoints 10 -runs 5
