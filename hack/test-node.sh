#!/usr/bin/env bash
# Real-node smoke test (part of `make test`): on the single-node cluster of
# `make cluster` (started here and removed at the end when none is up), the
# nftproxy DaemonSet is Ready, and a Pod reaches a backend Pod through a
# ClusterIP, through the Service's name (CoreDNS, itself behind a ClusterIP)
# and through a NodePort on the node's address; the node itself reaches the
# NodePort too. Needs root; skips otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/cluster/env.sh
. hack/cluster/images.env
if [ "$(id -u)" != 0 ]; then
	echo "test-node: not root: skipping the real-node smoke test" >&2
	exit 0
fi
own=0
if [ -f "$CLUSTER_DIR/ready" ] && [ "$(cat "$CLUSTER_DIR/ready")" != nftproxy ]; then
	echo "test-node: the cluster up runs $(cat "$CLUSTER_DIR/ready"), not nftproxy: make cluster-down first" >&2
	exit 1
fi
if [ ! -f "$CLUSTER_DIR/ready" ]; then own=1; fi
ns="nftproxy-smoke"
cleanup() {
	if [ "$own" = 1 ]; then hack/cluster-down.sh >&2 || true
	else hack/kubectl.sh delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
PROXY=nftproxy hack/cluster-up.sh
k() { hack/kubectl.sh -n "$ns" "$@"; }

hack/kubectl.sh -n kube-system rollout status daemonset/nftproxy --timeout=120s >/dev/null
hack/kubectl.sh create namespace "$ns" >/dev/null
k apply -f - >/dev/null <<MANIFEST
apiVersion: v1
kind: Pod
metadata:
  name: backend
  labels: {app: backend}
spec:
  containers:
  - name: netexec
    image: $AGNHOST_IMAGE
    args: [netexec, --http-port=8080]
    ports: [{containerPort: 8080}]
    readinessProbe:
      httpGet: {path: /healthz, port: 8080}
---
apiVersion: v1
kind: Pod
metadata:
  name: client
spec:
  containers:
  - name: client
    image: $AGNHOST_IMAGE
    args: [pause]
---
apiVersion: v1
kind: Service
metadata:
  name: backend
spec:
  type: NodePort
  selector: {app: backend}
  ports: [{port: 80, targetPort: 8080}]
MANIFEST
k wait --for=condition=Ready pod/backend pod/client --timeout=120s >/dev/null
cluster_ip="$(k get service backend -o jsonpath='{.spec.clusterIP}')"
node_port="$(k get service backend -o jsonpath='{.spec.ports[0].nodePort}')"

failures=0
# check NAME CMD...: CMD must print the backend's hostname within 30 s
# (the EndpointSlice and the proxy's next sync may lag the Pod's readiness).
check() {
	local name="$1" got="" i; shift
	for i in $(seq 1 30); do
		got="$("$@" 2>/dev/null || true)"
		if [ "$got" = backend ]; then echo "test-node: ok   $name" >&2; return; fi
		sleep 1
	done
	echo "test-node: FAIL $name: got '$got', want 'backend'" >&2
	failures=$((failures + 1))
}
check "Pod -> ClusterIP $cluster_ip:80" k exec client -- curl -sS --max-time 3 "http://$cluster_ip/hostname"
check "Pod -> Service name backend:80 (CoreDNS)" k exec client -- curl -sS --max-time 3 "http://backend/hostname"
check "Pod -> NodePort $NODE_IP:$node_port" k exec client -- curl -sS --max-time 3 "http://$NODE_IP:$node_port/hostname"
check "node -> NodePort $NODE_IP:$node_port" in_node curl -sS --max-time 3 "http://$NODE_IP:$node_port/hostname"

# nftproxy trace, run in the DaemonSet's Pod (no shell in the image: the
# binary alone) as docs/operations.md tells operators to: it predicts the
# backend Pod for the client's connection, and finds the node's tables doing
# what the API server's objects say (exit 0, not 3).
backend_ip="$(k get pod backend -o jsonpath='{.status.podIP}')"
client_ip="$(k get pod client -o jsonpath='{.status.podIP}')"
trace_() { hack/kubectl.sh -n kube-system exec daemonset/nftproxy -- nftproxy trace "$@"; }
predicts_backend() {
	trace_ --src "$client_ip" --dst "$cluster_ip:80" -o json | grep -q "\"destination\": \"$backend_ip:8080\"" && echo backend
}
matches_api() {
	trace_ --service "$ns/backend" --in-cluster --config /etc/nftproxy/config.conf >/dev/null && echo backend
}
check "trace: Pod -> ClusterIP is DNATed to the backend" predicts_backend
check "trace --service --in-cluster: the tables do what the API says" matches_api
checks=6
if [ "$failures" -gt 0 ]; then
	hack/kubectl.sh -n kube-system logs daemonset/nftproxy --tail=30 >&2 || true
	echo "test-node: $((checks - failures)) passed, $failures failed" >&2
	exit 1
fi
echo "test-node: $checks passed, 0 failed" >&2
