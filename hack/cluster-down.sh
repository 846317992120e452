#!/usr/bin/env bash
# `make cluster-down`: removes everything hack/cluster-up.sh made, on every
# node, and only that, in an order that leaves nothing behind; safe to run
# twice, and after a failed or interrupted `make cluster` of any size:
#
#   1. every kubelet, by its recorded pid, so nothing restarts;
#   2. every process in the Pods' cgroups (/sys/fs/cgroup/*/nftproxy-nodeI):
#      the containers, whatever state containerd is in;
#   3. containerd's shims: their tasks are deleted through each node's
#      containerd, and one still running is found by the socket it listens
#      on (recorded under the node's state dir) and checked against its
#      command line; then every containerd and the control plane;
#   4. every mount under the cluster's directory, deepest first: kubelets'
#      roots and Pod volumes, containerd's rootfs, shm and Pod network
#      namespaces (containerd mounts those under its state dir);
#   5. the nodes' and the segment's network namespaces (their veths and
#      bridges go with them), our cgroups, libcni's cached results for our
#      network, kubelets' log links, and the directory.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/cluster/env.sh
if [ "$(id -u)" != 0 ]; then
	echo "cluster-down: needs root" >&2; exit 1
fi

# kill_cgroup_procs CGROUP SIGNAL: signals every process in that Pod cgroup tree.
kill_cgroup_procs() {
	local f pid
	for f in $(find /sys/fs/cgroup/pids/"$1" -name cgroup.procs 2>/dev/null); do
		for pid in $(cat "$f" 2>/dev/null); do kill "-$2" "$pid" 2>/dev/null || true; done
	done
}

cgroup_procs_left() {
	find /sys/fs/cgroup/pids/"$1" -name cgroup.procs -exec cat {} + 2>/dev/null | grep -q .
}

# our_mounts: mount points under $CLUSTER_DIR, deepest first.
our_mounts() {
	awk -v dir="$CLUSTER_DIR" '$5 == dir || index($5, dir "/") == 1 { print $5 }' /proc/self/mountinfo |
		awk '{ print length($0), $0 }' | sort -rn | cut -d' ' -f2- | uniq
}

# stop_pods I: every container of node I, and its shims.
stop_pods() {
	local i="$1" dir cgroup tasks sandboxes sockets id pid sock
	dir="$(node_dir "$i")"
	cgroup="$(node_name "$i")"
	ctr_() { timeout 20 ctr --address "$dir/containerd/containerd.sock" -n k8s.io "$@"; }
	tasks="$dir/containerd/state/io.containerd.runtime.v2.task/k8s.io"
	sandboxes="$dir/containerd/root/io.containerd.grpc.v1.cri/sandboxes"
	# The shims' sockets (one shim per Pod), read before their tasks go away.
	sockets="$(awk '{ sub("^unix://", ""); print }' "$tasks"/*/address 2>/dev/null | sort -u || true)"
	SANDBOX_IDS="$SANDBOX_IDS $(ls "$sandboxes" 2>/dev/null || true)"
	# With containerd still up, deleting every task lets each shim clean up
	# and exit by itself.
	if daemon_pid "node$i-containerd" >/dev/null; then
		for id in $(ctr_ tasks ls -q 2>/dev/null || true); do
			ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true
		done
	fi
	kill_cgroup_procs "$cgroup" KILL
	for _ in $(seq 1 50); do cgroup_procs_left "$cgroup" || break; sleep 0.1; done
	# A shim still running (containerd was down, or delete failed) is found
	# by the socket it listens on, in the node's network namespace.
	for sock in $sockets; do
		if [ -e "$(node_netns "$i")" ]; then
			for pid in $(in_node_n "$i" ss -xlpn 2>/dev/null | awk -v s="$sock" '$5 == s' | grep -o 'pid=[0-9]*' | cut -d= -f2); do
				if ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
			done
		fi
		rm -f "$sock"
	done
}

SANDBOX_IDS=""
all_nodes="$(seq 1 "$MAX_NODES")"
for i in $all_nodes; do stop_daemon "node$i-kubelet"; done
for i in $all_nodes; do stop_pods "$i"; done
for i in $all_nodes; do stop_daemon "node$i-containerd"; done
for d in kube-scheduler kube-controller-manager kube-apiserver etcd; do
	stop_daemon "$d"
done
# A process recorded in a pid file that stop_daemon could not match (the
# file of an interrupted start) is left alone: its pid is not ours.
for m in $(our_mounts); do
	umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
done
if [ -n "$(our_mounts)" ]; then
	echo "cluster-down: still mounted, not removing $CLUSTER_DIR:" >&2
	our_mounts >&2
	exit 1
fi
for i in $all_nodes; do
	if [ -e "$(node_netns "$i")" ]; then ip netns delete "$(node_name "$i")"; fi
done
if [ -e "$LAN_NETNS" ]; then ip netns delete "$LAN_NS"; fi
# Pod cgroups, children before parents; rmdir only removes empty ones.
for i in $all_nodes; do
	for c in /sys/fs/cgroup/*/"$(node_name "$i")"; do
		[ -d "$c" ] || continue
		find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
		if [ -d "$c" ]; then echo "cluster-down: could not remove cgroup $c" >&2; fi
	done
done
# libcni's cache of our Pods' results (pkg/cri: one per network per sandbox).
rm -f /var/lib/cni/results/"$CNI_NETWORK"-* 2>/dev/null || true
for id in $SANDBOX_IDS; do rm -f "/var/lib/cni/results/cni-loopback-$id-lo"; done
# kubelet links every container's log into /var/log/containers whatever
# its pod logs dir; ours point under $CLUSTER_DIR.
for l in /var/log/containers/*.log; do
	[ -L "$l" ] || continue
	case "$(readlink "$l")" in "$CLUSTER_DIR"/*) rm -f "$l" ;; esac
done
# Directories containerd, libcni and kubelet create on first use; removed
# when empty (another user's files keep them).
rmdir /run/containerd/s /run/containerd /var/lib/cni/results /var/lib/cni /var/log/containers 2>/dev/null || true
rm -rf --one-file-system "$CLUSTER_DIR"
echo "cluster-down: removed (processes, mounts, namespaces, cgroups, $CLUSTER_DIR)" >&2
