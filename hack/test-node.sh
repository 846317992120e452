#!/usr/bin/env bash
# Real-cluster smoke test (part of `make test`): on the cluster of `make
# cluster` (NODES=2 started here and removed at the end when none is up),
# nftproxy's DaemonSet is Ready on every node, and traffic crosses nodes as
# a service proxy must move it:
#
#   - a Pod on node 1 reaches a ClusterIP whose only endpoint is on node 2,
#     and arrives there with its own address; also by the Service's name
#     (CoreDNS, itself behind a ClusterIP);
#   - a NodePort of node 1, from outside the nodes (the segment's own
#     address), is forwarded to node 2 with the source rewritten to node 1;
#   - externalTrafficPolicy: Local drops on node 1 (no local endpoint) and
#     keeps the client's address on node 2;
#   - node 1 itself reaches the NodePort;
#   - `nftproxy trace` in node 1's nftproxy Pod predicts the endpoint on
#     node 2, the drop on node 1, and finds the tables doing what the API
#     server's objects say.
#
# Those checks run three times: with deploy/ installed by kustomize (as
# hack/cluster-up.sh installs it); after deploy/'s objects are deleted (the
# rules stay in the kernel and carry traffic) and the Helm chart is
# installed with `helm install`; and after `helm upgrade` with a changed
# value, which must replace every Pod. Then Prometheus scrapes every
# nftproxy Pod (hack/cluster/prometheus.sh), and every expression of
# deploy/monitoring's alert rules and dashboard must return data
# (hack/promcheck); promtool checks the rules and runs their unit tests, and
# a test over the series as scraped. Outputs go to bin/monitoring/. At the
# end the kustomize install is put back.
#
# On a one-node cluster that is already up, the cross-node checks are
# replaced by the same paths within the node. Needs root; skips otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES="${NODES:-2}"
. hack/cluster/env.sh
. hack/cluster/images.env
if [ "$(id -u)" != 0 ]; then
	echo "test-node: not root: skipping the real-cluster smoke test" >&2
	exit 0
fi
own=0
if [ -f "$CLUSTER_DIR/ready" ] && [ "$(cat "$CLUSTER_DIR/ready")" != nftproxy ]; then
	echo "test-node: the cluster up runs $(cat "$CLUSTER_DIR/ready"), not nftproxy: make cluster-down first" >&2
	exit 1
fi
if [ ! -f "$CLUSTER_DIR/ready" ]; then own=1; fi
ns="nftproxy-smoke"
helm_started=0
cleanup() {
	if declare -F prom_stop >/dev/null; then prom_stop; fi
	if [ "$own" = 1 ]; then hack/cluster-down.sh >&2 || true; return; fi
	hack/kubectl.sh delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	if [ "$helm_started" = 1 ]; then kustomize_restore || echo "test-node: could not put the kustomize install back" >&2; fi
}
trap cleanup EXIT
PROXY=nftproxy NODES="$NODES" hack/cluster-up.sh
. hack/cluster/env.sh # the size of the cluster that is up
k() { hack/kubectl.sh -n "$ns" "$@"; }
client_node="$(node_name 1)"
backend=2
if [ "$NODES" -lt 2 ]; then backend=1; fi
backend_node="$(node_name "$backend")"
backend_ip_node="$(node_ip "$backend")"

hack/kubectl.sh -n kube-system rollout status daemonset/nftproxy --timeout=120s >/dev/null
hack/kubectl.sh create namespace "$ns" >/dev/null
k apply -f - >/dev/null <<MANIFEST
apiVersion: v1
kind: Pod
metadata:
  name: backend
  labels: {app: backend}
spec:
  nodeName: $backend_node
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
  nodeName: $client_node
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
---
apiVersion: v1
kind: Service
metadata:
  name: backend-local
spec:
  type: NodePort
  externalTrafficPolicy: Local
  selector: {app: backend}
  ports: [{port: 80, targetPort: 8080}]
MANIFEST
k wait --for=condition=Ready pod/backend pod/client --timeout=120s >/dev/null
cluster_ip="$(k get service backend -o jsonpath='{.spec.clusterIP}')"
node_port="$(k get service backend -o jsonpath='{.spec.ports[0].nodePort}')"
local_port="$(k get service backend-local -o jsonpath='{.spec.ports[0].nodePort}')"
backend_ip="$(k get pod backend -o jsonpath='{.status.podIP}')"
client_ip="$(k get pod client -o jsonpath='{.status.podIP}')"

passed=0
failures=0
phase="kustomize"
ok() { echo "test-node: ok   [$phase] $1" >&2; passed=$((passed + 1)); }
fail() { echo "test-node: FAIL [$phase] $1" >&2; failures=$((failures + 1)); }

# check NAME WANT CMD...: CMD must print WANT within 30 s (the EndpointSlice
# and the proxy's next sync may lag the Pod's readiness).
check() {
	local name="$1" want="$2" got="" i; shift 2
	for i in $(seq 1 30); do
		got="$("$@" 2>/dev/null || true)"
		if [ "$got" = "$want" ]; then ok "$name"; return; fi
		sleep 1
	done
	fail "$name: got '$got', want '$want'"
}

# refused NAME CMD...: CMD (a bounded request) must fail 3 times in a row.
refused() {
	local name="$1" i got; shift
	for i in 1 2 3; do
		if got="$("$@" 2>/dev/null)"; then fail "$name: answered '$got', want no answer"; return; fi
	done
	ok "$name"
}

# The backend's /clientip answers with the address the connection came from.
from_pod() { k exec client -- curl -sS --max-time 3 "$1/clientip" | cut -d: -f1; }
from_lan() { in_lan curl -sS --max-time 3 "$1/clientip" | cut -d: -f1; }
hostname_via() { k exec client -- curl -sS --max-time 3 "$1/hostname"; }

# traffic: every check of the header, against the proxy installed now.
traffic() {
	check "Pod on $client_node -> ClusterIP $cluster_ip:80 -> endpoint on $backend_node, client address kept" \
		"$client_ip" from_pod "http://$cluster_ip"
	check "Pod -> Service name backend:80 (CoreDNS)" backend hostname_via "http://backend"
	check "outside -> NodePort $NODE_IP:$node_port of $client_node -> $backend_node, source rewritten to $client_node" \
		"$NODE_IP" from_lan "http://$NODE_IP:$node_port"
	check "outside -> externalTrafficPolicy Local NodePort of $backend_node: client address kept" \
		"$LAN_IP" from_lan "http://$backend_ip_node:$local_port"
	if [ "$backend" != 1 ]; then
		refused "outside -> externalTrafficPolicy Local NodePort of $client_node (no local endpoint): dropped" \
			in_lan curl -sS --max-time 2 "http://$NODE_IP:$local_port/clientip"
	fi
	check "node $client_node -> NodePort $NODE_IP:$node_port" backend in_node curl -sS --max-time 3 "http://$NODE_IP:$node_port/hostname"
	traces
}

# traces: nftproxy trace, run in node 1's nftproxy Pod (no shell in the
# image: the binary alone) as docs/operations.md tells operators to.
traces() {
	proxy_pod="$(hack/kubectl.sh -n kube-system get pods -l app.kubernetes.io/name=nftproxy \
		--field-selector "spec.nodeName=$client_node" -o jsonpath='{.items[0].metadata.name}')"
	check "trace on $client_node: Pod -> ClusterIP is DNATed to the endpoint on $backend_node" yes predicts_backend
	if [ "$backend" != 1 ]; then
		check "trace on $client_node: outside -> Local NodePort is dropped" yes predicts_drop
	fi
	check "trace --service --in-cluster: the tables do what the API says" yes matches_api
}
trace_() { hack/kubectl.sh -n kube-system exec "$proxy_pod" -- nftproxy trace "$@"; }
predicts_backend() {
	trace_ --src "$client_ip" --dst "$cluster_ip:80" -o json | grep -q "\"destination\": \"$backend_ip:8080\"" && echo yes
}
predicts_drop() {
	trace_ --from external --src "$LAN_IP" --dst "$NODE_IP:$local_port" -o json | grep -q '"verdict": "drop"' && echo yes
}
matches_api() {
	trace_ --service "$ns/backend" --in-cluster --config /etc/nftproxy/config.conf >/dev/null && echo yes
}

traffic

# From kustomize to Helm, as an operator would move: delete deploy/'s
# objects, then install the chart with the same settings.
KUBECTL="$(hack/kube-binary.sh kubectl)"
. hack/cluster/manifests.sh
. hack/cluster/helm.sh
. hack/cluster/prometheus.sh
HELM="$(hack/helm.sh)"
helm_values bin/nftproxy-image.tar # built and imported by hack/cluster-up.sh
helm_started=1
kustomize_delete
phase="no proxy Pod"
check "the rules left in the kernel still carry Pod -> ClusterIP $cluster_ip:80" "$client_ip" from_pod "http://$cluster_ip"
phase="helm install"
helm_ install nftproxy "$CHART" --namespace kube-system --values "$HELM_VALUES" --wait --timeout 5m >&2
traffic
before="$(pod_uids)"
phase="helm upgrade"
helm_ upgrade nftproxy "$CHART" --namespace kube-system --reuse-values --set config.minSyncPeriod=2s --wait --timeout 5m >&2
hack/kubectl.sh -n kube-system rollout status daemonset/nftproxy --timeout=180s >/dev/null
synced_conf() { hack/kubectl.sh -n kube-system get configmap nftproxy -o jsonpath='{.data.config\.conf}' | grep -c '^minSyncPeriod: 2s$'; }
check "the upgrade wrote minSyncPeriod: 2s into config.conf" 1 synced_conf
replaced() { local now; now="$(pod_uids)"; [ -n "$now" ] && comm -12 <(tr ' ' '\n' <<<"$before") <(tr ' ' '\n' <<<"$now") | grep -c . || true; }
check "the upgrade replaced every nftproxy Pod (none of the $NODES left)" 0 replaced
revisions() { helm_ history nftproxy --namespace kube-system -o json | jq length; }
check "helm history has 2 revisions" 2 revisions
traffic
helm_ list --namespace kube-system >&2

phase="prometheus"
monitoring_checks "$ns"
if [ "$failures" -gt 0 ]; then
	hack/kubectl.sh -n kube-system logs "$proxy_pod" --tail=30 >&2 || true
fi
echo "test-node: on $NODES nodes" >&2
echo "test-node: $passed passed, $failures failed" >&2
[ "$failures" = 0 ]
