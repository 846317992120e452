# The control plane, one set of processes in node 1's network namespace
# (sourced by hack/cluster-up.sh and hack/rollout.sh, after env.sh): etcd on
# loopback, kube-apiserver on node 1's address, kube-controller-manager
# (which allocates every node's podCIDR) and kube-scheduler.

control_plane() {
	start_daemon etcd etcd --name node --data-dir "$CLUSTER_DIR/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster node=http://127.0.0.1:2380 --logger=zap
	wait_for etcd 60 in_node curl -fsS http://127.0.0.1:2379/health
	start_apiserver
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


# start_apiserver: kube-apiserver on node 1's address ($APISERVER: its binary).
start_apiserver() {
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
}
