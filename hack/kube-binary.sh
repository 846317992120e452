#!/usr/bin/env bash
# Prints the path of a Kubernetes binary, building it first when the cache
# does not have it yet:
#
#   hack/kube-binary.sh NAME      NAME: kube-apiserver kube-controller-manager
#                                 kube-scheduler kubelet kubectl kube-proxy
#                                 agnhost regression-issue-74839 e2e.test ginkgo
#
# Every binary comes from k8s.io/kubernetes at the version pinned in
# hack/tools/kubernetes/go.mod, so the control plane, kubelet, kubectl,
# kube-proxy and the e2e binary are one Kubernetes version. Binaries are kept
# in ${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy as NAME-VERSION, which survives
# between runs: only the first run pays for a build (minutes to tens of
# minutes on 2 cores; e2e.test is the largest). Build output goes to stderr;
# stdout carries only the path. Builds run under nice: the machine is shared.
set -euo pipefail
name="${1:-}"
case "$name" in
kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kubectl | kube-proxy)
	pkg="k8s.io/kubernetes/cmd/$name" ;;
agnhost) pkg="k8s.io/kubernetes/test/images/agnhost" ;;
regression-issue-74839) pkg="k8s.io/kubernetes/test/images/regression-issue-74839" ;;
e2e.test) pkg="k8s.io/kubernetes/test/e2e" ;;
ginkgo) pkg="github.com/onsi/ginkgo/v2/ginkgo" ;; # the version e2e.test links
*)
	echo "usage: hack/kube-binary.sh kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kubectl|kube-proxy|agnhost|regression-issue-74839|e2e.test|ginkgo" >&2
	exit 2 ;;
esac
tools="$(cd "$(dirname "$0")/tools/kubernetes" && pwd)"
version="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 } $1 == "k8s.io/kubernetes" { print $2 }' "$tools/go.mod" | head -n 1)"
if [ -z "$version" ]; then
	echo "kube-binary.sh: no k8s.io/kubernetes version in $tools/go.mod" >&2; exit 1
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy"
bin="$cache/$name-$version"
if [ -x "$bin" ]; then
	echo "$bin"; exit 0
fi
mkdir -p "$cache"
echo "kube-binary.sh: building $name $version into $bin (first run only; takes a while)" >&2
# Build to a temporary name and rename, so an interrupted build never
# leaves a half-written binary that a later run would trust.
tmp="$(mktemp "$cache/.$name-XXXXXX")"
trap 'rm -f "$tmp"' EXIT
# The version variables are what Kubernetes' own build stamps; without them
# the binaries report v0.0.0-master (and kubelet's Node, e2e's skew checks
# and kubectl version would show it).
minor="$(echo "$version" | cut -d. -f2)"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
ldflags="$ldflags -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$version"
ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
if [ "$name" = e2e.test ]; then
	# The e2e suite is a test binary (ginkgo), compiled but not run; go
	# test would also vet all of its packages, minutes of CPU for nothing.
	build=(go test -c -vet=off)
else
	build=(go build)
fi
(cd "$tools" && CGO_ENABLED=0 nice -n 15 "${build[@]}" -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg") >&2
chmod 755 "$tmp"
mv "$tmp" "$bin"
trap - EXIT
echo "$bin"
