# Manifests of the cluster (sourced by hack/cluster-up.sh and
# hack/rollout.sh, after env.sh and images.env).

# template FILE [I]: FILE with every @NAME@ replaced by that shell variable,
# and node I's name, address, state dir, podCIDR and cgroup root.
template() {
	local i="${2:-1}"
	sed -e "s|@NODE_DIR@|$(node_dir "$i")|g" -e "s|@DIR@|$CLUSTER_DIR|g" \
		-e "s|@NODE_IP@|$(node_ip "$i")|g" -e "s|@NODE_NAME@|$(node_name "$i")|g" \
		-e "s|@APISERVER_IP@|$NODE_IP|g" -e "s|@APISERVER_PORT@|$APISERVER_PORT|g" \
		-e "s|@POD_CIDR@|${POD_CIDR:-}|g" -e "s|@CLUSTER_CIDR@|$CLUSTER_CIDR|g" \
		-e "s|@CGROUP_ROOT@|$(node_name "$i")|g" -e "s|@CNI_NETWORK@|$CNI_NETWORK|g" \
		-e "s|@DNS_SERVICE_IP@|$DNS_SERVICE_IP|g" -e "s|@PAUSE_IMAGE@|$PAUSE_IMAGE|g" \
		-e "s|@COREDNS_IMAGE@|$COREDNS_IMAGE|g" -e "s|@KUBE_PROXY_IMAGE@|${KUBE_PROXY_IMAGE:-}|g" "$1"
}

# archive_image ARCHIVE: the image name an OCI archive of hack/images.sh holds.
archive_image() {
	tar -xOf "$1" index.json | sed -n 's/.*"org.opencontainers.image.ref.name":"\([^"]*\)".*/\1/p'
}


# nftproxy_overlay ARCHIVE DIR: writes DIR/kustomization.yaml, the overlay of
# deploy/ that installs nftproxy from the image in ARCHIVE
# (hack/cluster/deploy-overlay.yaml); its patches come last, so a caller
# may append more.
nftproxy_overlay() {
	local image
	image="$(archive_image "$1")"
	mkdir -p "$2"
	template hack/cluster/deploy-overlay.yaml | sed -e "s|@DEPLOY@|$(realpath --relative-to="$2" "$PWD/deploy")|" \
		-e "s|@IMAGE_NAME@|${image%:*}|" -e "s|@IMAGE_TAG@|${image##*:}|" >"$2/kustomization.yaml"
}
