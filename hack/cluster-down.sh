#!/usr/bin/env bash
# `make cluster-down`: removes everything hack/cluster-up.sh made, and only
# that, in an order that leaves nothing behind; safe to run twice, and after
# a failed or interrupted `make cluster`:
#
#   1. kubelet and kube-proxy, by their recorded pids, so nothing restarts;
#   2. every process in the Pods' cgroups (/sys/fs/cgroup/*/$CGROUP_ROOT):
#      the containers, whatever state containerd is in;
#   3. containerd's shims: their tasks are deleted through containerd, and
#      one still running is found by the socket it listens on (recorded
#      under our state dir) and checked against its command line; then
#      containerd and the control plane;
#   4. every mount under the cluster's directory, deepest first: kubelet's
#      root and Pod volumes, containerd's rootfs, shm and Pod network
#      namespaces (containerd mounts those under its state dir);
#   5. the node's network namespace (its veths and bridge go with it), our
#      cgroups, libcni's cached results for our network, and the directory.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/cluster/env.sh
if [ "$(id -u)" != 0 ]; then
	echo "cluster-down: needs root" >&2; exit 1
fi

# kill_cgroup_procs SIGNAL: signals every process in our Pod cgroups.
kill_cgroup_procs() {
	local f pid
	for f in $(find /sys/fs/cgroup/pids/"$CGROUP_ROOT" -name cgroup.procs 2>/dev/null); do
		for pid in $(cat "$f" 2>/dev/null); do kill "-$1" "$pid" 2>/dev/null || true; done
	done
}

cgroup_procs_left() {
	find /sys/fs/cgroup/pids/"$CGROUP_ROOT" -name cgroup.procs -exec cat {} + 2>/dev/null | grep -q .
}

# our_mounts: mount points under $CLUSTER_DIR, deepest first.
our_mounts() {
	awk -v dir="$CLUSTER_DIR" '$5 == dir || index($5, dir "/") == 1 { print $5 }' /proc/self/mountinfo |
		awk '{ print length($0), $0 }' | sort -rn | cut -d' ' -f2- | uniq
}

stop_daemon kube-proxy
stop_daemon kubelet
ctr_() { timeout 20 ctr --address "$CLUSTER_DIR/containerd/containerd.sock" -n k8s.io "$@"; }
tasks="$CLUSTER_DIR/containerd/state/io.containerd.runtime.v2.task/k8s.io"
sandboxes="$CLUSTER_DIR/containerd/root/io.containerd.grpc.v1.cri/sandboxes"
# The shims' sockets (one shim per Pod), read before their tasks go away.
sockets="$(awk '{ sub("^unix://", ""); print }' "$tasks"/*/address 2>/dev/null | sort -u || true)"
sandbox_ids="$(ls "$sandboxes" 2>/dev/null || true)"
# With containerd still up, deleting every task lets each shim clean up
# and exit by itself.
if daemon_pid containerd >/dev/null; then
	for id in $(ctr_ tasks ls -q 2>/dev/null || true); do
		ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true
	done
fi
kill_cgroup_procs KILL
for i in $(seq 1 50); do cgroup_procs_left || break; sleep 0.1; done
# A shim still running (containerd was down, or delete failed) is found by
# the socket it listens on, in the node's network namespace.
for sock in $sockets; do
	if [ -e "$NODE_NETNS" ]; then
		for pid in $(in_node ss -xlpn 2>/dev/null | awk -v s="$sock" '$5 == s' | grep -o 'pid=[0-9]*' | cut -d= -f2); do
			if ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
		done
	fi
	rm -f "$sock"
done
for d in containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do
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
if [ -e "$NODE_NETNS" ]; then ip netns delete "$NODE_NS"; fi
# Pod cgroups, children before parents; rmdir only removes empty ones.
for c in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do
	[ -d "$c" ] || continue
	find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
	if [ -d "$c" ]; then echo "cluster-down: could not remove cgroup $c" >&2; fi
done
# libcni's cache of our Pods' results (pkg/cri: one per network per sandbox).
rm -f /var/lib/cni/results/"$CNI_NETWORK"-* 2>/dev/null || true
for id in $sandbox_ids; do rm -f "/var/lib/cni/results/cni-loopback-$id-lo"; done
# Directories containerd and libcni create on first use; removed when empty
# (another user's files keep them).
rmdir /run/containerd/s /run/containerd /var/lib/cni/results /var/lib/cni 2>/dev/null || true
rm -rf --one-file-system "$CLUSTER_DIR"
echo "cluster-down: removed (processes, mounts, namespace $NODE_NS, cgroups, $CLUSTER_DIR)" >&2
