#!/usr/bin/env bash
# Prints the path of the helm command, building it first when the cache does
# not have it yet:
#
#   hack/helm.sh           the path (built on the first run)
#   hack/helm.sh ARGS...   runs helm with ARGS
#
# helm comes from helm.sh/helm/v3 at the version pinned in
# hack/tools/helm/go.mod, built as Helm's own Makefile builds it: its version
# and the Kubernetes version its templates see by default (.Capabilities,
# the chart's kubeVersion check) stamped from the pinned modules. It is kept
# in ${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy as helm-VERSION beside the
# Kubernetes binaries (hack/kube-binary.sh); only the first run pays for the
# build (a few minutes on 2 cores), under nice: the machine is shared. Build
# output goes to stderr.
set -euo pipefail
tools="$(cd "$(dirname "$0")/tools/helm" && pwd)"
# module_version MODULE: the version go.mod requires.
module_version() {
	awk -v m="$1" '($1 == "require" && $2 == m) { print $3 } $1 == m { print $2 }' "$tools/go.mod" | head -n 1
}
version="$(module_version helm.sh/helm/v3)"
k8s="$(module_version k8s.io/client-go)" # v0.MINOR.PATCH: Kubernetes 1.MINOR
if [ -z "$version" ] || [ -z "$k8s" ]; then
	echo "helm.sh: no helm.sh/helm/v3 or k8s.io/client-go version in $tools/go.mod" >&2; exit 1
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy"
bin="$cache/helm-$version"
if [ ! -x "$bin" ]; then
	mkdir -p "$cache"
	echo "helm.sh: building helm $version into $bin (first run only)" >&2
	# A temporary name, renamed when complete: an interrupted build never
	# leaves a half-written binary that a later run would trust.
	tmp="$(mktemp "$cache/.helm-XXXXXX")"
	trap 'rm -f "$tmp"' EXIT
	minor="$(echo "$k8s" | cut -d. -f2)"
	ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$version"
	for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
		ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
	done
	(cd "$tools" && CGO_ENABLED=0 nice -n 15 go build -trimpath -ldflags "$ldflags" -o "$tmp" helm.sh/helm/v3/cmd/helm) >&2
	chmod 755 "$tmp"
	mv "$tmp" "$bin"
	trap - EXIT
fi
if [ $# -eq 0 ]; then
	echo "$bin"; exit 0
fi
exec "$bin" "$@"
