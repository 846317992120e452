#!/usr/bin/env bash
# Prints the path of a kube-apiserver binary for the end-to-end tests and
# the demo, building it first when the cache does not have it yet.
#
# The binary comes from k8s.io/kubernetes at the version pinned in
# hack/tools/kube-apiserver/go.mod (the Kubernetes release matching our
# k8s.io/api). It is kept in ${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy, which
# survives between runs, so only the first run pays for the build (many
# minutes on 2 cores). KUBE_APISERVER=/path skips all of this.
# Build output goes to stderr; stdout carries only the path.
set -euo pipefail
if [ -n "${KUBE_APISERVER:-}" ]; then
	echo "$KUBE_APISERVER"; exit 0
fi
tools="$(cd "$(dirname "$0")/tools/kube-apiserver" && pwd)"
version="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' "$tools/go.mod")"
if [ -z "$version" ]; then
	echo "kube-apiserver.sh: no k8s.io/kubernetes version in $tools/go.mod" >&2; exit 1
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy"
bin="$cache/kube-apiserver-$version"
if [ -x "$bin" ]; then
	echo "$bin"; exit 0
fi
mkdir -p "$cache"
echo "kube-apiserver.sh: building kube-apiserver $version into $bin (first run only; takes a while)" >&2
# Build to a temporary name and rename, so an interrupted build never
# leaves a half-written binary that a later run would trust.
tmp="$(mktemp "$cache/.kube-apiserver-XXXXXX")"
trap 'rm -f "$tmp"' EXIT
# The version variables are what Kubernetes' own build stamps; without them
# the binary reports v0.0.0-master.
minor="$(echo "$version" | cut -d. -f2)"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
ldflags="$ldflags -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
(cd "$tools" && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp" k8s.io/kubernetes/cmd/kube-apiserver) >&2
chmod 755 "$tmp"
mv "$tmp" "$bin"
trap - EXIT
echo "$bin"
