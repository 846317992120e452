# Helm on the cluster of `make cluster` (sourced by hack/test-node.sh, after
# env.sh and manifests.sh): moves nftproxy from deploy/'s kustomize install
# to the chart (deploy/helm/nftproxy) as an operator would, upgrades it, and
# puts the kustomize install back. helm (hack/helm.sh) runs in node 1's
# network namespace with the admin kubeconfig; its cache and config live in
# the cluster's directory, which cluster-down removes.

CHART="deploy/helm/nftproxy"
HELM_VALUES="$CLUSTER_DIR/helm-values.yaml"

helm_() {
	HELM_CACHE_HOME="$CLUSTER_DIR/helm/cache" HELM_CONFIG_HOME="$CLUSTER_DIR/helm/config" \
		HELM_DATA_HOME="$CLUSTER_DIR/helm/data" in_node "$HELM" --kubeconfig "$KUBECONFIG_ADMIN" "$@"
}

# helm_values ARCHIVE: the values of the cluster's install, what
# hack/cluster/deploy-overlay.yaml sets with kustomize (the image, the API
# server's address, clusterCIDR, kube-proxy's Pod label), plus the metrics
# Service on the node's address for Prometheus.
helm_values() {
	local image
	image="$(archive_image "$1")"
	cat >"$HELM_VALUES" <<VALUES
image:
  repository: "${image%:*}"
  tag: "${image##*:}"
config:
  clusterCIDR: "$CLUSTER_CIDR"
  metricsBindAddress: 0.0.0.0:10249
apiServer:
  host: "$NODE_IP"
  port: "$APISERVER_PORT"
podLabels:
  k8s-app: kube-proxy
metrics:
  service:
    enabled: true
VALUES
}

# kustomize_delete removes deploy/'s objects; the Pods stop and leave their
# rules in the kernel.
kustomize_delete() {
	kubectl_ delete -k "$CLUSTER_DIR/deploy" --wait=true >/dev/null
	wait_for "the nftproxy Pods to go" 120 no_proxy_pods
}

no_proxy_pods() {
	[ -z "$(kubectl_ -n kube-system get pods -l app.kubernetes.io/name=nftproxy -o name)" ]
}

# kustomize_restore puts the cluster back as hack/cluster-up.sh left it.
kustomize_restore() {
	helm_ uninstall nftproxy --namespace kube-system --wait >/dev/null 2>&1 || true
	wait_for "the nftproxy Pods to go" 120 no_proxy_pods || true
	kubectl_ apply -k "$CLUSTER_DIR/deploy" >/dev/null
	kubectl_ -n kube-system rollout status daemonset/nftproxy --timeout=180s >/dev/null
}

# pod_uids: the nftproxy Pods' UIDs, sorted, on one line.
pod_uids() {
	kubectl_ -n kube-system get pods -l app.kubernetes.io/name=nftproxy -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | sort | paste -sd' '
}
