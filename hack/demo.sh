#!/usr/bin/env bash
# `make demo`: builds nftproxy and (once, cached) kube-apiserver, then runs
# the demo program (integration/demo) as root: a real kube-apiserver and
# etcd, Services of each type with HTTP backends, nftproxy, requests and
# the resulting nftables table, all in network namespaces it removes.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "demo: needs root (network namespaces, nftables): sudo make demo" >&2
	exit 1
fi
for tool in ip nft etcd; do
	if ! command -v "$tool" >/dev/null; then
		echo "demo: $tool not found; on Debian: apt-get install iproute2 nftables etcd-server" >&2
		exit 1
	fi
done
hack/build.sh >&2
export NFTPROXY="$PWD/bin/nftproxy"
KUBE_APISERVER="$(hack/kube-apiserver.sh)"
export KUBE_APISERVER
go build -o bin/demo ./integration/demo
exec bin/demo "$@"
