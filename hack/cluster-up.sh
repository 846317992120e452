#!/usr/bin/env bash
# `make cluster NODES=N`: a Kubernetes cluster of N nodes (1 to 3) on this
# machine, every part real, each node's "host network" a network namespace
# of its own (hack/cluster/env.sh has the plan):
#
#   etcd (Debian etcd-server), kube-apiserver, kube-controller-manager and
#   kube-scheduler, one set, on node 1; on every node its own containerd +
#   runc (Debian) and kubelet (hack/kube-binary.sh: one Kubernetes version,
#   built once into the cache); the CNI bridge/host-local/portmap plugins
#   (Debian) with each node's podCIDR; CoreDNS behind kube-dns; and the
#   service proxy as the Pods of one DaemonSet: nftproxy installed from
#   deploy/ (PROXY=nftproxy, the default), or upstream kube-proxy in
#   nftables mode (PROXY=kube-proxy) as kubeadm installs it, never both.
#
# The nodes' eth0s join one L2 segment (bridge lan0 in namespace
# nftproxy-lan); each node routes the other nodes' podCIDRs via their
# addresses, as a simple routed CNI does, and has a default route. Every
# daemon is started with `nsenter --net`, keeping the machine's mount
# namespace (cgroups, /sys). No image is pulled: each is built from scratch
# (hack/images.sh) and imported into every node's containerd. When a
# cluster of the same size and proxy is already up this does nothing; any
# other leftover (a failed run, another size) is removed first with
# hack/cluster-down.sh, and a failure here removes what this run made,
# keeping the logs.
#
#   NODES=3 hack/cluster-up.sh    then: hack/kubectl.sh get nodes
#   hack/cluster-down.sh          removes everything
set -euo pipefail
cd "$(dirname "$0")/.."
want_nodes="${NODES:-1}"
. hack/cluster/env.sh
. hack/cluster/pki.sh
. hack/cluster/control-plane.sh
. hack/cluster/manifests.sh
PROXY="${PROXY:-nftproxy}"
case "$PROXY" in nftproxy | kube-proxy) ;; *) echo "cluster: PROXY must be nftproxy or kube-proxy" >&2; exit 2 ;; esac
case "$want_nodes" in [1-3]) ;; *) echo "cluster: NODES must be 1 to $MAX_NODES" >&2; exit 2 ;; esac
if [ "$(id -u)" != 0 ]; then
	echo "cluster: needs root (network namespaces, containerd, kubelet): sudo make cluster" >&2; exit 1
fi

preflight() {
	local missing=() pair
	for pair in etcd:etcd-server containerd:containerd runc:runc ctr:containerd buildah:buildah \
		openssl:openssl nsenter:util-linux unshare:util-linux ip:iproute2 nft:nftables \
		/usr/lib/cni/bridge:containernetworking-plugins /bin/busybox:busybox-static \
		/bin/nc.openbsd:netcat-openbsd curl:curl wget:wget dig:bind9-dnsutils; do
		if [ "${pair:0:1}" = / ]; then [ -e "${pair%%:*}" ] && continue
		else command -v "${pair%%:*}" >/dev/null && continue; fi
		missing+=("${pair#*:}")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "cluster: missing Debian packages: ${missing[*]} (apt-get install them; .ci/run does)" >&2
		exit 1
	fi
}

# up: true when the recorded cluster has the size asked for, the same
# proxy, and runs every daemon.
up() {
	[ -f "$CLUSTER_DIR/ready" ] && [ "$(cat "$CLUSTER_DIR/ready")" = "$PROXY" ] || return 1
	[ "$NODES" = "$want_nodes" ] || return 1
	local d i
	for d in etcd kube-apiserver kube-controller-manager kube-scheduler; do
		daemon_pid "$d" >/dev/null || return 1
	done
	for i in $(seq 1 "$NODES"); do
		daemon_pid "node$i-containerd" >/dev/null && daemon_pid "node$i-kubelet" >/dev/null || return 1
	done
	kubectl_ get --raw /readyz >/dev/null 2>&1
}

# pod_cidr I prints node I's podCIDR once the controller-manager allocated it.
pod_cidr() {
	local cidr
	cidr="$(kubectl_ get node "$(node_name "$1")" -o jsonpath='{.spec.podCIDR}')" && [ -n "$cidr" ] && echo "$cidr"
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
	IMAGES=("$(hack/images.sh pause)" "$(hack/images.sh agnhost)" "$(hack/images.sh coredns)"
		"$(hack/images.sh busybox)" "$(hack/images.sh dnsutils)" "$(hack/images.sh distroless-iptables)"
		"$(hack/images.sh regression-issue-74839)")
	# nftproxy's image is on every node also when kube-proxy runs, for a
	# migration from one to the other (hack/rollout.sh).
	NFTPROXY_ARCHIVE="$(hack/images.sh nftproxy)"
	IMAGES+=("$NFTPROXY_ARCHIVE")
	if [ "$PROXY" = kube-proxy ]; then IMAGES+=("$(hack/images.sh kube-proxy)"); fi
}

# network makes the segment and every node's interface on it. A node's
# eth0 is one end of a veth pair whose other end is a port of lan0, so
# nothing is connected to the machine.
network() {
	ip netns add "$LAN_NS"
	in_lan ip link set lo up
	in_lan ip link add lan0 type bridge
	in_lan ip addr add "$LAN_IP/$NODE_PREFIX" dev lan0
	in_lan ip link set lan0 up
	local i ns
	for i in $(seq 1 "$NODES"); do
		ns="$(node_name "$i")"
		ip netns add "$ns"
		in_node_n "$i" ip link set lo up
		in_lan ip link add "$ns" type veth peer name eth0 netns "$ns"
		in_lan ip link set "$ns" master lan0 up
		in_node_n "$i" ip addr add "$(node_ip "$i")/$NODE_PREFIX" dev eth0
		in_node_n "$i" ip link set eth0 up
		# A default route, as every node has: locally generated packets to a
		# ClusterIP are routed before they are DNATed, and traffic the proxy
		# does not take leaves the way it would on a real host.
		in_node_n "$i" ip route add default via "$LAN_IP" dev eth0
		in_node_n "$i" sysctl -qw net.ipv4.ip_forward=1
		# What a node's sysctl.d sets for its service proxy (kube-proxy's
		# defaults, docs/operations.md); per network namespace, so only this
		# node's. nf_conntrack is loaded first so that the keys exist.
		in_node_n "$i" nft -f - <<<'table ip probe { chain c { ct state new accept; }; }; delete table ip probe'
		in_node_n "$i" sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_established=86400 \
			net.netfilter.nf_conntrack_tcp_timeout_close_wait=3600
	done
}

# runtime I: node I's containerd, with every image imported. Its CNI
# config dir starts empty: cni_network writes the config once the node has
# its podCIDR (containerd watches the dir).
runtime() {
	local i="$1" dir image
	dir="$(node_dir "$i")"
	mkdir -p "$dir/containerd" "$dir/cni/net.d"
	template hack/cluster/containerd.toml "$i" >"$dir/containerd/config.toml"
	start_daemon -n "$i" "node$i-containerd" containerd --config "$dir/containerd/config.toml"
	wait_for "node $i containerd" 60 ctr --address "$dir/containerd/containerd.sock" version
	for image in "${IMAGES[@]}"; do
		ctr --address "$dir/containerd/containerd.sock" -n k8s.io images import "$image" >/dev/null
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

# kubelet I starts node I's kubelet: its own root dir, pod logs dir,
# certificate, cgroup root and node name.
kubelet() {
	local i="$1" c dir cgroup setup
	dir="$(node_dir "$i")"
	cgroup="$(node_name "$i")"
	# kubelet's cgroup-root must exist in every controller; cpuset children
	# start empty on cgroup v1, so give ours the parent's CPUs and memory nodes.
	for c in /sys/fs/cgroup/*/; do
		[ "$(stat -fc %T "$c")" = cgroupfs ] || continue
		mkdir -p "$c$cgroup"
	done
	cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$cgroup/cpuset.cpus"
	cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$cgroup/cpuset.mems"
	# kubelet mounts Pod volumes under its root dir; containerd and runc, in
	# the machine's mount namespace, must see them: a shared bind mount
	# whose peer is in kubelet's own mount namespace.
	mkdir -p "$dir/kubelet" "$dir/pod-logs"
	mount --bind "$dir/kubelet" "$dir/kubelet"
	mount --make-shared "$dir/kubelet"
	template hack/cluster/kubelet.yaml "$i" >"$dir/kubelet.yaml"
	# set -e: if a file cannot be covered, kubelet does not start (and so
	# cannot write the machine's value).
	setup="set -e; $(kubelet_sysctls | paste -sd ';')"
	start_daemon -n "$i" "node$i-kubelet" unshare --mount --propagation unchanged -- sh -c "$setup; exec \"\$0\" \"\$@\"" \
		"$KUBELET" --config="$dir/kubelet.yaml" --kubeconfig="$CLUSTER_DIR/kubelet-node$i.kubeconfig" \
		--hostname-override="$(node_name "$i")" --node-ip="$(node_ip "$i")" \
		--root-dir="$dir/kubelet" --cert-dir="$dir/kubelet-pki" --v=2
}

# cni_network I: once node I has its podCIDR, its CNI config (the bridge
# with that range) and a route to that range on every other node, via node
# I's address.
cni_network() {
	local i="$1" j name cidr
	name="$(node_name "$i")"
	wait_for "node $name to register" 120 kubectl_ get node "$name"
	wait_for "node $name to get its podCIDR" 60 pod_cidr "$i"
	cidr="$(pod_cidr "$i")"
	POD_CIDR="$cidr" template hack/cluster/cni.conflist "$i" >"$(node_dir "$i")/cni/net.d/10-$CNI_NETWORK.conflist"
	for j in $(seq 1 "$NODES"); do
		[ "$j" = "$i" ] && continue
		in_node_n "$j" ip route replace "$cidr" via "$(node_ip "$i")" dev eth0
	done
}

nodes() {
	local i pids=()
	for i in $(seq 1 "$NODES"); do
		runtime "$i" &
		pids+=($!)
	done
	wait_all "containerd and images" "${pids[@]}"
	for i in $(seq 1 "$NODES"); do kubelet "$i"; done
	for i in $(seq 1 "$NODES"); do cni_network "$i"; done
	for i in $(seq 1 "$NODES"); do
		kubectl_ wait --for=condition=Ready "node/$(node_name "$i")" --timeout=120s >/dev/null
	done
}

# wait_all WHAT PID...: waits for each of those background jobs; fails if
# one failed.
wait_all() {
	local what="$1" pid failed=0
	shift
	for pid in "$@"; do wait "$pid" || failed=1; done
	if [ "$failed" = 1 ]; then echo "cluster: $what failed" >&2; return 1; fi
}

# proxy installs the service proxy on every node as the Pods of one
# DaemonSet: nftproxy as an operator would, with `kubectl apply -k` of an
# overlay of deploy/ that sets only the image, the API server's address,
# clusterCIDR and kube-proxy's Pod label; or kube-proxy as kubeadm installs
# it (hack/cluster/kube-proxy.yaml).
proxy() {
	local name=nftproxy
	if [ "$PROXY" = kube-proxy ]; then
		name=kube-proxy
		template hack/cluster/kube-proxy.yaml >"$CLUSTER_DIR/kube-proxy.yaml"
		kubectl_ apply -f "$CLUSTER_DIR/kube-proxy.yaml" >/dev/null
	else
		nftproxy_overlay "$NFTPROXY_ARCHIVE" "$CLUSTER_DIR/deploy"
		kubectl_ apply -k "$CLUSTER_DIR/deploy" >/dev/null
	fi
	kubectl_ -n kube-system rollout status "daemonset/$name" --timeout=180s >/dev/null
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
	log "already up: $NODES nodes with $PROXY ($CLUSTER_DIR); hack/cluster-down.sh removes it"
	exit 0
fi
binaries
hack/cluster-down.sh >&2
NODES="$want_nodes"
trap failed EXIT
mkdir -p "$CLUSTER_DIR" "$RUN_DIR" "$LOG_DIR"
echo "$NODES" >"$CLUSTER_DIR/size"
make_pki
for c in admin controller-manager scheduler; do kubeconfig "$c"; done
for i in $(seq 1 "$NODES"); do kubeconfig "kubelet-node$i"; done
network;        log "namespaces $LAN_NS (segment) and $NODES nodes: $(for i in $(seq 1 "$NODES"); do printf '%s ' "$(node_ip "$i")"; done)"
control_plane;  log "etcd, kube-apiserver, controller-manager, scheduler up on $NODE_NAME"
nodes;          log "$NODES nodes Ready (containerd, ${#IMAGES[@]} images, kubelet, podCIDR routes)"
proxy;          log "$PROXY up on every node"
dns;            log "CoreDNS up behind kube-dns $DNS_SERVICE_IP"
echo "$PROXY" >"$CLUSTER_DIR/ready"
trap - EXIT
log "ready in $(($(date +%s) - start))s: hack/kubectl.sh get pods -A; make cluster-down removes it"
