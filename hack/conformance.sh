#!/usr/bin/env bash
# `make conformance`: Kubernetes' own e2e suite (e2e.test, built from the
# same k8s.io/kubernetes version as the cluster) against the cluster of
# `make cluster`, starting one of NODES nodes (3 unless one is up) if none
# is. By default it runs every test of `[sig-network] Services` (all of that
# group's Conformance tests and the rest), `Networking Granular Checks:
# Services`, `Conntrack` and `KubeProxy` (the sig-network tests about the
# service proxy), and every other `[sig-network]` test labelled
# `[Conformance]` (DNS, Pod networking, EndpointSlices, the proxy
# subresource, ...). hack/conformance/skip.txt excludes a few for a stated
# reason (what this machine cannot do); a test that needs what the cluster
# lacks skips itself and is reported with the suite's reason. The ginkgo CLI
# of the same version runs the suite in PROCS parallel processes (4),
# [Serial] tests last. Writes the log, Ginkgo's JSON report and results.md
# (test, outcome, reason) to bin/conformance/PROXY-NODES/, and exits
# non-zero when a test fails.
#
#   make conformance                       nftproxy (the cluster's proxy), 3 nodes
#   FOCUS='NodePort' make conformance      a subset (a Ginkgo focus regex)
#   NODES=1 make conformance               on one node
#   make cluster-down; PROXY=kube-proxy make conformance   upstream kube-proxy
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
NODES_ASKED="${NODES:-}"
. hack/cluster/env.sh
. hack/cluster/images.env
if [ "$(id -u)" != 0 ]; then
	echo "conformance: needs root (the cluster's network namespace)" >&2; exit 1
fi
running=""
if [ -f "$CLUSTER_DIR/ready" ]; then running="$(cat "$CLUSTER_DIR/ready")"; fi
if [ -n "$running" ] && [ -n "${PROXY:-}" ] && [ "$PROXY" != "$running" ]; then
	echo "conformance: the cluster runs $running, PROXY=$PROXY: make cluster-down first" >&2; exit 1
fi
if [ -n "$running" ] && [ -n "$NODES_ASKED" ] && [ "$NODES_ASKED" != "$NODES" ]; then
	echo "conformance: the cluster has $NODES nodes, NODES=$NODES_ASKED: make cluster-down first" >&2; exit 1
fi
if [ -z "$running" ]; then NODES="${NODES_ASKED:-3}"; fi
PROXY="${PROXY:-${running:-nftproxy}}"
export PROXY NODES
start=$(date +%s)
e2e="$(hack/kube-binary.sh e2e.test)"
ginkgo="$(hack/kube-binary.sh ginkgo)"
kubectl="$(hack/kube-binary.sh kubectl)"
built=$(date +%s)
hack/cluster-up.sh
cluster_done=$(date +%s)

FOCUS="${FOCUS:-\[sig-network\] ((Services|Networking Granular Checks: Services|Conntrack|KubeProxy) |.*\[Conformance\])}"
skip="$(grep -v -e '^#' -e '^\s*$' hack/conformance/skip.txt | cut -f1 | paste -sd '|')"
out="$repo/bin/conformance/$PROXY-$NODES"
rm -rf "$out"
mkdir -p "$out"
cat >"$out/repo-list.yaml" <<REPOS
promoterE2eRegistry: $E2E_REGISTRY/e2e-test-images
gcRegistry: $E2E_REGISTRY
buildImageRegistry: $E2E_REGISTRY/build-image
REPOS
# The ginkgo CLI takes a compiled suite only by a name ending in .test.
ln -s "$e2e" "$out/e2e.test"
echo "conformance: e2e.test against $PROXY, focus '$FOCUS'; log: $out/e2e.log" >&2
set +e
(cd "$out" && in_node env KUBE_TEST_REPO_LIST="$out/repo-list.yaml" "$ginkgo" run \
	--procs="${PROCS:-4}" --timeout=4h --no-color -v \
	--focus="$FOCUS" --skip="$skip" --output-dir="$out" --json-report=report.json \
	"$out/e2e.test" -- --kubeconfig="$KUBECONFIG_ADMIN" --kubectl-path="$kubectl" \
	--report-dir="$out" --disable-log-dump --num-nodes="$NODES" \
	>"$out/e2e.log" 2>&1)
e2e_status=$?
set -e
end=$(date +%s)
if [ ! -s "$out/report.json" ]; then
	echo "conformance: e2e.test wrote no report (exit $e2e_status); tail of $out/e2e.log:" >&2
	tail -n 30 "$out/e2e.log" >&2
	exit 1
fi
{
	echo "proxy: $PROXY"
	echo "nodes: $NODES"
	echo "kubernetes: $(basename "$e2e" | sed 's/^e2e.test-//')"
	echo "focus: $FOCUS"
	echo "time: e2e.test/ginkgo/kubectl builds $((built - start))s, make cluster $((cluster_done - built))s, tests $((end - cluster_done))s, total $((end - start))s"
} | tee "$out/summary.txt" >&2
go run ./hack/conformance -report "$out/report.json" -focus "$FOCUS" \
	-skip-file hack/conformance/skip.txt -out "$out/results.md"
