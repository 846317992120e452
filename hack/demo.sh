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
# On a fresh Debian machine, install what is missing (ip, nft, etcd).
missing=()
for pair in ip:iproute2 nft:nftables etcd:etcd-server; do
	command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	if ! command -v apt-get >/dev/null; then
		echo "demo: missing ${missing[*]} and no apt-get to install them" >&2
		exit 1
	fi
	echo "demo: installing ${missing[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
hack/build.sh >&2
export NFTPROXY="$PWD/bin/nftproxy"
KUBE_APISERVER="$(hack/kube-apiserver.sh)"
export KUBE_APISERVER
go build -o bin/demo ./integration/demo
exec bin/demo "$@"
