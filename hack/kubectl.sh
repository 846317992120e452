#!/usr/bin/env bash
# kubectl against the real node's cluster (make cluster): runs the kubectl
# built from the pinned Kubernetes version inside the node's network
# namespace, where the API server listens, with the admin kubeconfig.
#
#   hack/kubectl.sh get pods -A
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/cluster/env.sh
kubectl="$(hack/kube-binary.sh kubectl)"
exec nsenter --net="$NODE_NETNS" -- "$kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"
