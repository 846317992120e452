#!/usr/bin/env bash
# Prints how nftproxy's metrics differ from kube-proxy's (nftables mode, the
# k8s.io/kubernetes version pinned in hack/tools/kubernetes/go.mod):
# "=" the same name, type, labels and buckets, "-" kube-proxy's only (with
# the reason), "+" nftproxy's only. It first asks kube-proxy's own code for
# its list and fails if proxy/metrics/testdata/kube-proxy-metrics.txt, which
# the unit test compares against, is not that list. The first run compiles
# part of k8s.io/kubernetes (a few minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
golden=proxy/metrics/testdata/kube-proxy-metrics.txt
fresh="$(cd hack/tools/kubernetes && nice -n 15 go run ./kubeproxy-metrics)"
if [ "$fresh" != "$(cat "$golden")" ]; then
	diff -u "$golden" <(printf '%s\n' "$fresh") || true
	echo "metrics-diff: $golden is not what kube-proxy registers: write the output of" >&2
	echo "  (cd hack/tools/kubernetes && go run ./kubeproxy-metrics) to it" >&2
	exit 1
fi
head -n 1 "$golden"
echo "# nftproxy: proxy/metrics (go test -run TestKubeProxyMetrics -v ./proxy/metrics)"
go test -count=1 -run 'TestKubeProxyMetrics$' -v ./proxy/metrics | sed -n 's/^ *metrics_test\.go:[0-9]*: //p'
