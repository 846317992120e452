#!/usr/bin/env bash
# `make cluster`: a single-node Kubernetes cluster on this machine, every part
# real, the node's "host network" being a network namespace of its own:
#
#   etcd (Debian etcd-server), kube-apiserver, kube-controller-manager,
#   kube-scheduler, kubelet and kubectl (hack/kube-binary.sh: one Kubernetes
#   version, built once into the cache), containerd + runc (Debian), the CNI
#   bridge/host-local/portmap plugins (Debian), CoreDNS behind kube-dns, and
#   the service proxy: nftproxy installed from deploy/ as its DaemonSet
#   (PROXY=nftproxy, the default) or upstream kube-proxy in nftables mode
#   (PROXY=kube-proxy), never both.
#
# Every daemon runs in network namespace $NODE_NS (hack/cluster/env.sh) with
# `nsenter --net`, keeping the machine's mount namespace (cgroups, /sys). No
# image is pulled: each is built from scratch (hack/images.sh) and imported.
# When a cluster with the same proxy is already up this does nothing; any
# other leftover (a failed run) is removed first with hack/cluster-down.sh,
# and a failure here removes what this run made, keeping the logs.
#
#   hack/cluster-up.sh            then: hack/kubectl.sh get pods -A
#   hack/cluster-down.sh          removes everything
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
. hack/cluster/env.sh
. hack/cluster/pki.sh
PROXY="${PROXY:-nftproxy}"
case "$PROXY" in nftproxy | kube-proxy) ;; *) echo "cluster: PROXY must be nftproxy or kube-proxy" >&2; exit 2 ;; esac
if [ "$(id -u)" != 0 ]; then
	echo "cluster: needs root (network namespaces, containerd, kubelet): sudo make cluster" >&2; exit 1
fi

preflight() {
	local missing=() pair
	for pair in etcd:etcd-server containerd:containerd runc:runc ctr:containerd buildah:buildah \
		openssl:openssl nsenter:util-linux unshare:util-linux ip:iproute2 nft:nftables \
		/usr/lib/cni/bridge:containernetworking-plugins /bin/busybox:busybox-static \
		/bin/nc.openbsd:netcat-openbsd curl:curl wget:wget; do
		if [ "${pair:0:1}" = / ]; then [ -e "${pair%%:*}" ] && continue
		else command -v "${pair%%:*}" >/dev/null && continue; fi
		missing+=("${pair#*:}")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "cluster: missing Debian packages: ${missing[*]} (apt-get install them; .ci/run does)" >&2
		exit 1
	fi
}

# up: true when the recorded cluster runs every daemon and the same proxy.
up() {
	[ -f "$CLUSTER_DIR/ready" ] && [ "$(cat "$CLUSTER_DIR/ready")" = "$PROXY" ] || return 1
	local d
	for d in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet; do
		daemon_pid "$d" >/dev/null || return 1
	done
	kubectl_ get --raw /readyz >/dev/null 2>&1
}

pod_cidr() {
	local cidr
	cidr="$(kubectl_ get node "$NODE_NAME" -o jsonpath='{.spec.podCIDR}')" && [ -n "$cidr" ] && echo "$cidr"
}

kubectl_() { in_node "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# template FILE: FILE with every @NAME@ replaced by that shell variable.
template() {
	sed -e "s|@DIR@|$CLUSTER_DIR|g" -e "s|@NODE_IP@|$NODE_IP|g" -e "s|@NODE_NAME@|$NODE_NAME|g" \
		-e "s|@POD_CIDR@|$POD_CIDR|g" -e "s|@CLUSTER_CIDR@|$CLUSTER_CIDR|g" \
		-e "s|@CGROUP_ROOT@|$CGROUP_ROOT|g" -e "s|@CNI_NETWORK@|$CNI_NETWORK|g" \
		-e "s|@DNS_SERVICE_IP@|$DNS_SERVICE_IP|g" -e "s|@PAUSE_IMAGE@|$PAUSE_IMAGE|g" \
		-e "s|@COREDNS_IMAGE@|$COREDNS_IMAGE|g" "$1"
}

failed() {
	local keep
	keep="$(mktemp -d /tmp/nftproxy-cluster-logs.XXXXXX)"
	cp -r "$LOG_DIR/." "$keep/" 2>/dev/null || true
	echo "cluster: FAILED; logs kept in $keep; removing what this run made" >&2
	hack/cluster-down.sh >&2 || true
}

# binaries builds (once) and finds everything the node runs, and the images.
binaries() {
	APISERVER="$(hack/kube-binary.sh kube-apiserver)"
	CONTROLLER_MANAGER="$(hack/kube-binary.sh kube-controller-manager)"
	SCHEDULER="$(hack/kube-binary.sh kube-scheduler)"
	KUBELET="$(hack/kube-binary.sh kubelet)"
	IMAGES=("$(hack/images.sh pause)" "$(hack/images.sh agnhost)" "$(hack/images.sh coredns)")
	if [ "$PROXY" = nftproxy ]; then
		NFTPROXY_ARCHIVE="$(hack/images.sh nftproxy)"
		IMAGES+=("$NFTPROXY_ARCHIVE")
	else
		KUBE_PROXY="$(hack/kube-binary.sh kube-proxy)"
	fi
}

network() {
	ip netns add "$NODE_NS"
	ip -n "$NODE_NS" link set lo up
	# The node's interface: one end of a veth pair whose other end stays
	# in the namespace too, so nothing is connected to the machine.
	ip -n "$NODE_NS" link add eth0 type veth peer name eth0-peer
	ip -n "$NODE_NS" addr add "$NODE_IP/$NODE_PREFIX" dev eth0
	ip -n "$NODE_NS" link set eth0 up
	ip -n "$NODE_NS" link set eth0-peer up
	# A default route, as every node has: locally generated packets to a
	# ClusterIP are routed before they are DNATed.
	ip -n "$NODE_NS" route add default dev eth0
	in_node sysctl -qw net.ipv4.ip_forward=1
}

control_plane() {
	start_daemon etcd etcd --name node --data-dir "$CLUSTER_DIR/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster node=http://127.0.0.1:2380 --logger=zap
	wait_for etcd 60 in_node curl -fsS http://127.0.0.1:2379/health
	start_daemon kube-apiserver "$APISERVER" \
		--etcd-servers=http://127.0.0.1:2379 \
		--bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port="$APISERVER_PORT" \
		--tls-cert-file="$PKI_DIR/apiserver.crt" --tls-private-key-file="$PKI_DIR/apiserver.key" \
		--client-ca-file="$PKI_DIR/ca.crt" \
		--service-cluster-ip-range="$SERVICE_CIDR" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI_DIR/sa.pub" --service-account-signing-key-file="$PKI_DIR/sa.key" \
		--authorization-mode=Node,RBAC --allow-privileged=true \
		--kubelet-client-certificate="$PKI_DIR/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$PKI_DIR/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types=InternalIP \
		--cert-dir="$CLUSTER_DIR/apiserver" --profiling=false
	wait_for kube-apiserver 120 kubectl_ get --raw /readyz
	start_daemon kube-controller-manager "$CONTROLLER_MANAGER" \
		--kubeconfig="$CLUSTER_DIR/controller-manager.kubeconfig" \
		--authentication-kubeconfig="$CLUSTER_DIR/controller-manager.kubeconfig" \
		--authorization-kubeconfig="$CLUSTER_DIR/controller-manager.kubeconfig" \
		--service-account-private-key-file="$PKI_DIR/sa.key" --root-ca-file="$PKI_DIR/ca.crt" \
		--use-service-account-credentials=true \
		--allocate-node-cidrs=true --cluster-cidr="$CLUSTER_CIDR" --node-cidr-mask-size=24 \
		--service-cluster-ip-range="$SERVICE_CIDR" \
		--bind-address=127.0.0.1 --leader-elect=false --profiling=false \
		--cert-dir="$CLUSTER_DIR/controller-manager"
	start_daemon kube-scheduler "$SCHEDULER" \
		--kubeconfig="$CLUSTER_DIR/scheduler.kubeconfig" \
		--authentication-kubeconfig="$CLUSTER_DIR/scheduler.kubeconfig" \
		--authorization-kubeconfig="$CLUSTER_DIR/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --profiling=false
}

runtime() {
	mkdir -p "$CLUSTER_DIR/containerd" "$CLUSTER_DIR/cni/net.d"
	template hack/cluster/containerd.toml >"$CLUSTER_DIR/containerd/config.toml"
	template hack/cluster/cni.conflist >"$CLUSTER_DIR/cni/net.d/10-$CNI_NETWORK.conflist"
	start_daemon containerd containerd --config "$CLUSTER_DIR/containerd/config.toml"
	wait_for containerd 60 ctr --address "$CLUSTER_DIR/containerd/containerd.sock" version
	local image
	for image in "${IMAGES[@]}"; do
		ctr --address "$CLUSTER_DIR/containerd/containerd.sock" -n k8s.io images import "$image" >/dev/null
	done
}

# kubelet_sysctls: kubelet sets six kernel tunables machine-wide at start
# (vm.overcommit_memory=1, kernel.panic=10, kernel.panic_on_oops=1, ...;
# pkg/kubelet/cm setupKernelTunables), which would change this shared
# machine. It runs in a mount namespace of its own where those /proc/sys
# files are covered by files holding the values it wants, so it finds them
# set and writes nothing. Prints the shell commands that do it.
kubelet_sysctls() {
	local dir="$CLUSTER_DIR/kubelet-sysctl" pair
	mkdir -p "$dir"
	echo "mount --make-rprivate /proc"
	for pair in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
		kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
		mkdir -p "$(dirname "$dir/${pair%%=*}")"
		echo "${pair#*=}" >"$dir/${pair%%=*}"
		echo "mount --bind -o ro $dir/${pair%%=*} /proc/sys/${pair%%=*}"
	done
}

node() {
	local c
	# kubelet's cgroup-root must exist in every controller; cpuset children
	# start empty on cgroup v1, so give ours the parent's CPUs and memory nodes.
	for c in /sys/fs/cgroup/*/; do
		[ "$(stat -fc %T "$c")" = cgroupfs ] || continue
		mkdir -p "$c$CGROUP_ROOT"
	done
	cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$CGROUP_ROOT/cpuset.cpus"
	cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$CGROUP_ROOT/cpuset.mems"
	# kubelet mounts Pod volumes under its root dir; containerd and runc, in
	# the machine's mount namespace, must see them: a shared bind mount
	# whose peer is in kubelet's own mount namespace.
	mkdir -p "$CLUSTER_DIR/kubelet"
	mount --bind "$CLUSTER_DIR/kubelet" "$CLUSTER_DIR/kubelet"
	mount --make-shared "$CLUSTER_DIR/kubelet"
	template hack/cluster/kubelet.yaml >"$CLUSTER_DIR/kubelet.yaml"
	local setup
	# set -e: if a file cannot be covered, kubelet does not start (and so
	# cannot write the machine's value).
	setup="set -e; $(kubelet_sysctls | paste -sd ';')"
	start_daemon kubelet unshare --mount --propagation unchanged -- sh -c "$setup; exec \"\$0\" \"\$@\"" \
		"$KUBELET" --config="$CLUSTER_DIR/kubelet.yaml" --kubeconfig="$CLUSTER_DIR/kubelet.kubeconfig" \
		--hostname-override="$NODE_NAME" --node-ip="$NODE_IP" \
		--root-dir="$CLUSTER_DIR/kubelet" --cert-dir="$CLUSTER_DIR/kubelet-pki" --v=2
	wait_for "node $NODE_NAME to register" 120 kubectl_ get node "$NODE_NAME"
	local cidr
	wait_for "node $NODE_NAME to get its podCIDR" 60 pod_cidr
	cidr="$(pod_cidr)"
	if [ "$cidr" != "$POD_CIDR" ]; then
		echo "cluster: node podCIDR $cidr, but the CNI network is configured for $POD_CIDR" >&2; return 1
	fi
	kubectl_ wait --for=condition=Ready "node/$NODE_NAME" --timeout=120s >/dev/null
}

# proxy installs the service proxy: nftproxy as an operator would, with
# `kubectl apply -k` of an overlay of deploy/ that sets only the image, the
# API server's address and clusterCIDR; or kube-proxy as a process.
proxy() {
	if [ "$PROXY" = kube-proxy ]; then
		template hack/cluster/kube-proxy.yaml >"$CLUSTER_DIR/kube-proxy.yaml"
		start_daemon kube-proxy "$KUBE_PROXY" --config="$CLUSTER_DIR/kube-proxy.yaml" --v=2
		wait_for "kube-proxy /healthz" 120 in_node curl -fsS http://127.0.0.1:10256/healthz
		return
	fi
	local overlay="$CLUSTER_DIR/deploy" image
	image="$(tar -xOf "$NFTPROXY_ARCHIVE" index.json | sed -n 's/.*"org.opencontainers.image.ref.name":"\([^"]*\)".*/\1/p')"
	mkdir -p "$overlay"
	template hack/cluster/deploy-overlay.yaml | sed -e "s|@DEPLOY@|$(realpath --relative-to="$overlay" "$repo/deploy")|" \
		-e "s|@IMAGE_NAME@|${image%:*}|" -e "s|@IMAGE_TAG@|${image##*:}|" \
		-e "s|@APISERVER_PORT@|$APISERVER_PORT|" >"$overlay/kustomization.yaml"
	kubectl_ apply -k "$overlay" >/dev/null
	kubectl_ -n kube-system rollout status daemonset/nftproxy --timeout=180s >/dev/null
}

dns() {
	template hack/cluster/coredns.yaml >"$CLUSTER_DIR/coredns.yaml"
	kubectl_ apply -f "$CLUSTER_DIR/coredns.yaml" >/dev/null
	kubectl_ -n kube-system rollout status deployment/coredns --timeout=180s >/dev/null
}

start=$(date +%s)
preflight
. hack/cluster/images.env
KUBECTL="$(hack/kube-binary.sh kubectl)"
if up; then
	log "already up with $PROXY ($CLUSTER_DIR); hack/cluster-down.sh removes it"
	exit 0
fi
binaries
hack/cluster-down.sh >&2
trap failed EXIT
mkdir -p "$CLUSTER_DIR" "$RUN_DIR" "$LOG_DIR"
make_pki
for c in admin controller-manager scheduler kubelet kube-proxy; do kubeconfig "$c"; done
network;        log "network namespace $NODE_NS: node $NODE_IP"
control_plane;  log "etcd, kube-apiserver, controller-manager, scheduler up"
runtime;        log "containerd up, ${#IMAGES[@]} images imported"
node;           log "kubelet up, node $NODE_NAME Ready"
proxy;          log "$PROXY up"
dns;            log "CoreDNS up behind kube-dns $DNS_SERVICE_IP"
echo "$PROXY" >"$CLUSTER_DIR/ready"
trap - EXIT
log "ready in $(($(date +%s) - start))s: hack/kubectl.sh get pods -A; make cluster-down removes it"
