# Shared by hack/cluster-up.sh, hack/cluster-down.sh, hack/conformance.sh and
# hack/test-node.sh: where the single-node cluster keeps its state, its
# addresses, and helpers to start and stop its daemons by recorded pid.
#
# Address plan. The machine itself has 192.0.2.0/24 and fd00::/64 on eth0;
# nothing below overlaps them, and every address lives only inside the node's
# network namespace and the pod namespaces hanging off its bridge:
#   node ("host network")  198.51.100.10/24 on eth0 of namespace $NODE_NS
#   pods (cluster CIDR)    10.244.0.0/16; this node's podCIDR 10.244.0.0/24,
#                          bridge cni0 = 10.244.0.1 (the pods' gateway)
#   Services               10.96.0.0/16; kubernetes = 10.96.0.1, kube-dns = 10.96.0.10
# IPv4 only: the node is single-stack.

CLUSTER_DIR="${NFTPROXY_CLUSTER_DIR:-/var/tmp/nftproxy-cluster}"
NODE_NS="nftproxy-node"
NODE_NAME="nftproxy-node"
NODE_IP="198.51.100.10"
NODE_PREFIX="24"
CLUSTER_CIDR="10.244.0.0/16"
POD_CIDR="10.244.0.0/24"
SERVICE_CIDR="10.96.0.0/16"
KUBERNETES_SERVICE_IP="10.96.0.1"
DNS_SERVICE_IP="10.96.0.10"
APISERVER_PORT="6443"
# kubelet's cgroup parent for every pod, under each cgroup v1 controller:
# cluster-down removes exactly this subtree.
CGROUP_ROOT="nftproxy-node"
# The CNI network's name: libcni keeps its result cache in
# /var/lib/cni/results/NAME-*, which cluster-down removes.
CNI_NETWORK="nftproxy-pods"

RUN_DIR="$CLUSTER_DIR/run"        # pid files: NAME.pid
LOG_DIR="$CLUSTER_DIR/logs"
PKI_DIR="$CLUSTER_DIR/pki"
KUBECONFIG_ADMIN="$CLUSTER_DIR/admin.kubeconfig"
NODE_NETNS="/run/netns/$NODE_NS"

# in_node runs a command in the node's network namespace, keeping the
# machine's mount namespace (cgroups, /sys), unlike `ip netns exec`.
in_node() {
	nsenter --net="$NODE_NETNS" -- "$@"
}

# start_daemon NAME CMD...: starts CMD in the node's network namespace in a
# session of its own, logs to $LOG_DIR/NAME.log and records its pid in
# $RUN_DIR/NAME.pid, where cluster-down finds it. Every daemon's command line
# names a path under $CLUSTER_DIR: that is how a recorded pid is recognised.
start_daemon() {
	local name="$1"; shift
	mkdir -p "$RUN_DIR" "$LOG_DIR"
	# nsenter and setsid both exec (no fork: this subshell is not a process
	# group leader), so $! is the daemon's own pid.
	nsenter --net="$NODE_NETNS" -- setsid "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 &
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
