# Shared by hack/cluster-up.sh, hack/cluster-down.sh, hack/conformance.sh,
# hack/test-node.sh and hack/rollout.sh: where the cluster keeps its state,
# its nodes and addresses, and helpers to start and stop its daemons by
# recorded pid.
#
# Nodes. The cluster has NODES nodes (1 to 3), each a network namespace of
# its own (nftproxy-node1, nftproxy-node2, ...) running its own containerd
# and kubelet; node 1 also runs the control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler), which every other node reaches
# over the segment. A cluster that is up records its size in
# $CLUSTER_DIR/size, which wins over NODES for every script but
# cluster-up.
#
# Address plan. The machine itself has 192.0.2.0/24 and fd00::/64 on eth0;
# nothing below overlaps them, and every address lives only inside the
# cluster's namespaces and the pod namespaces hanging off their bridges:
#   segment                198.51.100.0/24: bridge lan0 in namespace
#                          nftproxy-lan, which has 198.51.100.1 itself (the
#                          nodes' default gateway, and the "client outside
#                          the nodes" of the tests; it forwards nothing)
#   node I ("host network") 198.51.100.(10+I) on eth0 of nftproxy-nodeI
#   pods (cluster CIDR)    10.244.0.0/16; each node's podCIDR is the /24 the
#                          controller-manager allocates to it, bridge cni0 =
#                          its .1 (the pods' gateway); every node routes the
#                          other nodes' podCIDRs via their node addresses
#   Services               10.96.0.0/16; kubernetes = 10.96.0.1, kube-dns = 10.96.0.10
# IPv4 only: the nodes are single-stack.

CLUSTER_DIR="${NFTPROXY_CLUSTER_DIR:-/var/tmp/nftproxy-cluster}"
MAX_NODES=3
# NODES: the size of the cluster that is up, else the size asked for.
if [ -f "$CLUSTER_DIR/size" ]; then
	read -r NODES <"$CLUSTER_DIR/size"
fi
NODES="${NODES:-1}"
LAN_NS="nftproxy-lan"
LAN_NETNS="/run/netns/$LAN_NS"
LAN_IP="198.51.100.1"
NODE_PREFIX="24"
CLUSTER_CIDR="10.244.0.0/16"
SERVICE_CIDR="10.96.0.0/16"
KUBERNETES_SERVICE_IP="10.96.0.1"
DNS_SERVICE_IP="10.96.0.10"
APISERVER_PORT="6443"
# The CNI network's name: libcni keeps its result cache in
# /var/lib/cni/results/NAME-*, which cluster-down removes.
CNI_NETWORK="nftproxy-pods"

# node_name I, node_ip I, node_dir I: node I's name (also its network
# namespace and its kubelet's cgroup parent under each cgroup v1
# controller, which cluster-down removes), address and state directory.
node_name() { echo "nftproxy-node$1"; }
node_ip() { echo "198.51.100.$((10 + $1))"; }
node_dir() { echo "$CLUSTER_DIR/nodes/nftproxy-node$1"; }
node_netns() { echo "/run/netns/nftproxy-node$1"; }

# Node 1 is the control-plane node: the API server listens on its address
# and kubectl, e2e.test and the control plane run in its namespace.
NODE_NAME="$(node_name 1)"
NODE_NS="$NODE_NAME"
NODE_IP="$(node_ip 1)"
NODE_NETNS="$(node_netns 1)"

RUN_DIR="$CLUSTER_DIR/run"        # pid files: NAME.pid
LOG_DIR="$CLUSTER_DIR/logs"
PKI_DIR="$CLUSTER_DIR/pki"
KUBECONFIG_ADMIN="$CLUSTER_DIR/admin.kubeconfig"

# in_node runs a command in node 1's network namespace (in_node_n I: node
# I's), keeping the machine's mount namespace (cgroups, /sys), unlike
# `ip netns exec`.
in_node() { nsenter --net="$NODE_NETNS" -- "$@"; }
in_node_n() { local i="$1"; shift; nsenter --net="$(node_netns "$i")" -- "$@"; }
in_lan() { nsenter --net="$LAN_NETNS" -- "$@"; }

# kubectl_: kubectl ($KUBECTL) as the cluster's admin, from node 1.
kubectl_() { in_node "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# start_daemon [-n I] NAME CMD...: starts CMD in node I's network namespace
# (default node 1) in a session of its own, logs to $LOG_DIR/NAME.log and
# records its pid in $RUN_DIR/NAME.pid, where cluster-down finds it. Every
# daemon's command line names a path under $CLUSTER_DIR: that is how a
# recorded pid is recognised.
start_daemon() {
	local netns="$NODE_NETNS"
	if [ "$1" = -n ]; then netns="$(node_netns "$2")"; shift 2; fi
	local name="$1"; shift
	mkdir -p "$RUN_DIR" "$LOG_DIR"
	# nsenter and setsid both exec (no fork: this subshell is not a process
	# group leader), so $! is the daemon's own pid.
	nsenter --net="$netns" -- setsid "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 &
	local pid=$!
	echo "$pid" >"$RUN_DIR/$name.pid"
}

# daemon_pid NAME prints the pid recorded for NAME when that process is still
# one of ours (its command line names $CLUSTER_DIR), so a recycled pid is
# never signalled.
daemon_pid() {
	local file="$RUN_DIR/$1.pid" pid
	[ -f "$file" ] || return 1
	read -r pid <"$file" || return 1
	ours "$pid" || return 1
	echo "$pid"
}

# ours PID: the process exists and its command line names $CLUSTER_DIR.
ours() {
	[ -n "$1" ] && [ -r "/proc/$1/cmdline" ] || return 1
	tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$CLUSTER_DIR"
}

# stop_daemon NAME: SIGTERM, up to 10 s, then SIGKILL; removes the pid file.
stop_daemon() {
	local pid i
	if pid="$(daemon_pid "$1")"; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 1 100); do
			[ -e "/proc/$pid" ] || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$RUN_DIR/$1.pid"
}

# wait_for DESCRIPTION SECONDS CMD...: polls CMD once a second.
wait_for() {
	local what="$1" secs="$2" i; shift 2
	for i in $(seq 1 "$secs"); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 1
	done
	echo "cluster: timed out after ${secs}s waiting for $what" >&2
	return 1
}

log() { echo "cluster: $*" >&2; }
