#!/usr/bin/env bash
# `make rollout`: what the service proxy's rollouts lose, measured on a
# 3-node cluster of its own (started here, removed at the end). Bounded
# streams of requests (cmd/traffic) run through one Service whose endpoints
# are on nodes 2 and 3 while each scenario happens:
#
#   from a Pod on node 1: TCP requests to the ClusterIP (a new connection
#   each), long-lived TCP connections through the same ClusterIP, UDP
#   requests to the ClusterIP; from outside the nodes (the segment's own
#   namespace): TCP requests and long-lived connections to node 2's
#   NodePort.
#
# Scenarios (SCENARIOS="restart kill apiserver migrate" by default):
#   restart    kubectl rollout restart ds/nftproxy, until rolled out
#   kill       node 2's nftproxy process killed with SIGKILL, until the
#              kubelet restarted it and it is Ready
#   apiserver  kube-apiserver stopped for 60 s, then started again
#   kube-proxy-restart  for comparison: kubectl rollout restart
#              ds/kube-proxy on a cluster running kube-proxy
#   migrate    the migration of docs/operations.md ("Replacing kube-proxy"):
#              a cluster running kube-proxy's DaemonSet (nftables mode) moved
#              to nftproxy node by node with the two node labels
# Each scenario's row: requests sent and failed, long-lived connections
# broken, per stream; written to bin/rollout/results.md, with every
# stream's raw counts (first and last failure, errors) beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=3
. hack/cluster/env.sh
. hack/cluster/images.env
. hack/cluster/manifests.sh
. hack/cluster/control-plane.sh
if [ "$(id -u)" != 0 ]; then
	echo "rollout: needs root (the cluster's namespaces)" >&2; exit 1
fi
SCENARIOS="${SCENARIOS:-restart kill apiserver migrate}"
KUBECTL="$(hack/kube-binary.sh kubectl)"
out="$PWD/bin/rollout"
rm -rf "$out"
mkdir -p "$out"
ns=nftproxy-rollout
traffic_dir="$CLUSTER_DIR/traffic"
trap 'hack/cluster-down.sh >&2 || true' EXIT

# cluster PROXY: a fresh 3-node cluster running PROXY, with the traffic
# binary where the Pods' hostPath volume finds it (a static binary: the
# Pods run it on the agnhost image's root filesystem).
cluster() {
	hack/cluster-down.sh >&2
	PROXY="$1" NODES=3 hack/cluster-up.sh
	mkdir -p "$traffic_dir/run"
	CGO_ENABLED=0 go build -trimpath -o "$traffic_dir/traffic" ./cmd/traffic
	kubectl_ create namespace "$ns" >/dev/null
	local i
	for i in 2 3; do
		pod "backend-$i" "$(node_name "$i")" '[serve]' "labels: {app: backend}" \
			"readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}"
	done
	kubectl_ -n "$ns" apply -f - >/dev/null <<MANIFEST
apiVersion: v1
kind: Service
metadata:
  name: backend
spec:
  type: NodePort
  selector: {app: backend}
  ports:
  - {name: tcp, port: 80, targetPort: 8080, protocol: TCP}
  - {name: udp, port: 81, targetPort: 8081, protocol: UDP}
  - {name: echo, port: 82, targetPort: 8082, protocol: TCP}
MANIFEST
	kubectl_ -n "$ns" wait --for=condition=Ready pod/backend-2 pod/backend-3 --timeout=120s >/dev/null
}

# pod NAME NODE ARGS [METADATA [PROBE]]: a Pod on NODE running the traffic
# binary with ARGS (a YAML list), from the hostPath $traffic_dir.
pod() {
	local meta="${4:-}"
	[ -n "$meta" ] || meta="labels: {}"
	kubectl_ -n "$ns" apply -f - >/dev/null <<MANIFEST
apiVersion: v1
kind: Pod
metadata:
  name: $1
  $meta
spec:
  nodeName: $2
  restartPolicy: ${RESTART:-Always}
  terminationGracePeriodSeconds: 1
  containers:
  - name: traffic
    image: $AGNHOST_IMAGE
    command: [/traffic/traffic]
    args: $3
    ${5:-}
    volumeMounts: [{name: traffic, mountPath: /traffic}]
  volumes: [{name: traffic, hostPath: {path: $traffic_dir}}]
MANIFEST
}

# measure SCENARIO CMD...: the streams run from 5 s before CMD until 10 s
# after it; then the row of SCENARIO.
measure() {
	local name="$1" cip np_tcp np_echo started
	shift
	cip="$(kubectl_ -n "$ns" get service backend -o jsonpath='{.spec.clusterIP}')"
	np_tcp="$(kubectl_ -n "$ns" get service backend -o jsonpath='{.spec.ports[0].nodePort}')"
	np_echo="$(kubectl_ -n "$ns" get service backend -o jsonpath='{.spec.ports[2].nodePort}')"
	rm -f "$traffic_dir/run/$name".*
	# Never restarted: a second start would find the stop file and
	# overwrite the counts.
	RESTART=Never pod "client-$name" "$(node_name 1)" "[load, -tcp, '$cip:80', -udp, '$cip:81', -echo, '$cip:82', -conns, '8', -rate, '20', -max, 20m, -stop, /traffic/run/$name.stop, -out, /traffic/run/$name.pod.json]"
	wait_for "the client Pod of $name" 120 pod_running "client-$name"
	in_lan "$traffic_dir/traffic" load -tcp "$(node_ip 2):$np_tcp" -echo "$(node_ip 2):$np_echo" -conns 8 -rate 20 \
		-max 20m -stop "$traffic_dir/run/$name.stop" -out "$traffic_dir/run/$name.outside.json" &
	local outside=$!
	sleep 5
	started=$(date +%s)
	log "$name: $*"
	"$@"
	local took=$(($(date +%s) - started))
	sleep 10
	touch "$traffic_dir/run/$name.stop"
	wait "$outside" || true
	wait_for "the client Pod's counts of $name" 30 test -s "$traffic_dir/run/$name.pod.json"
	cp "$traffic_dir/run/$name.pod.json" "$traffic_dir/run/$name.outside.json" "$out/"
	kubectl_ -n kube-system logs -l app.kubernetes.io/name=nftproxy --prefix --timestamps --tail=-1 \
		>"$out/$name.nftproxy.log" 2>&1 || true
	row "$name" "$took" >>"$out/rows.md"
	kubectl_ -n "$ns" delete pod "client-$name" --wait=false >/dev/null
}

pod_running() {
	[ "$(kubectl_ -n "$ns" get pod "$1" -o jsonpath='{.status.phase}')" = Running ]
}

# row NAME SECONDS: one line of the results table.
row() {
	local p="$out/$1.pod.json" o="$out/$1.outside.json"
	printf '| %s | %ss | %s | %s | %s | %s | %s |\n' "$1" "$2" \
		"$(counts "$p" tcp)" "$(broken "$p")" "$(counts "$p" udp)" "$(counts "$o" tcp)" "$(broken "$o")"
}

# counts FILE STREAM: "failed of sent" of one stream of a traffic result.
counts() {
	jq -r ".$2 | \"\\(.failed) of \\(.sent)\"" "$1"
}

broken() {
	jq -r '.echo | "\(.broken // 0) of \(.sent - .failed)"' "$1"
}

# Scenarios.

restart() {
	kubectl_ -n kube-system rollout restart "daemonset/${1:-nftproxy}" >/dev/null
	kubectl_ -n kube-system rollout status "daemonset/${1:-nftproxy}" --timeout=300s >/dev/null
}

kill_proxy() {
	local node pod id sock pid restarts
	node="$(node_name 2)"
	pod="$(kubectl_ -n kube-system get pods -l app.kubernetes.io/name=nftproxy --field-selector "spec.nodeName=$node" -o jsonpath='{.items[0].metadata.name}')"
	restarts="$(kubectl_ -n kube-system get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')"
	id="$(kubectl_ -n kube-system get pod "$pod" -o jsonpath='{.status.containerStatuses[0].containerID}')"
	sock="$(node_dir 2)/containerd/containerd.sock"
	pid="$(ctr --address "$sock" -n k8s.io tasks ls | awk -v id="${id#containerd://}" '$1 == id { print $2 }')"
	[ -n "$pid" ] || { echo "rollout: no task for $pod's container ${id#containerd://}" >&2; return 1; }
	kill -KILL "$pid"
	wait_for "$pod to restart" 120 restarted "$pod" "$restarts"
	kubectl_ -n kube-system wait --for=condition=Ready "pod/$pod" --timeout=120s >/dev/null
}

restarted() {
	[ "$(kubectl_ -n kube-system get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}')" != "$2" ]
}

apiserver_down() {
	APISERVER="$(hack/kube-binary.sh kube-apiserver)"
	stop_daemon kube-apiserver
	sleep 60
	start_apiserver
	wait_for kube-apiserver 120 kubectl_ get --raw /readyz
}

# migrate follows docs/operations.md, "Replacing kube-proxy", for a
# kube-proxy in nftables mode: no drain and no clean-up, both labels at once.
migrate() {
	# kube-proxy's Pods go away during the migration, and their logs with
	# them: follow them from the start.
	kubectl_ -n kube-system logs -f -l k8s-app=kube-proxy --prefix --timestamps --max-log-requests 10 \
		>"$out/migrate.kube-proxy.log" 2>&1 &
	kubectl_ -n kube-system patch daemonset kube-proxy --type merge -p '
{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
 {"nodeSelectorTerms":[{"matchExpressions":[{"key":"nftproxy.io/kube-proxy","operator":"NotIn","values":["off"]}]}]}}}}}}}' >/dev/null
	kubectl_ -n kube-system rollout status daemonset/kube-proxy --timeout=300s >/dev/null
	nftproxy_overlay "$PWD/bin/nftproxy-image.tar" "$CLUSTER_DIR/deploy"
	cat >>"$CLUSTER_DIR/deploy/kustomization.yaml" <<'PATCH'
- target: {kind: DaemonSet, name: nftproxy}
  patch: |
    - op: add
      path: /spec/template/spec/nodeSelector/nftproxy.io~1proxy
      value: nftproxy
PATCH
	kubectl_ apply -k "$CLUSTER_DIR/deploy" >/dev/null
	local i node
	for i in $(seq 1 "$NODES"); do
		node="$(node_name "$i")"
		kubectl_ label node "$node" nftproxy.io/kube-proxy=off nftproxy.io/proxy=nftproxy >/dev/null
		wait_for "nftproxy on $node" 120 proxy_ready "$node"
	done
	kubectl_ -n kube-system delete daemonset kube-proxy --wait=true >/dev/null
}

proxy_ready() {
	kubectl_ -n kube-system get pods -l app.kubernetes.io/name=nftproxy --field-selector "spec.nodeName=$1" \
		-o jsonpath='{.items[0].status.conditions[?(@.type=="Ready")].status}' | grep -qx True
}

command -v jq >/dev/null || { echo "rollout: needs jq (apt-get install jq)" >&2; exit 1; }
cat >"$out/rows.md" <<'HEAD'
| scenario | took | Pod -> ClusterIP TCP: failed of sent | Pod -> ClusterIP long-lived: broken of opened | Pod -> ClusterIP UDP: failed of sent | outside -> NodePort TCP: failed of sent | outside -> NodePort long-lived: broken of opened |
|---|---|---|---|---|---|---|
HEAD
nft_scenarios="$(echo "$SCENARIOS" | tr ' ' '\n' | grep -vx -e migrate -e kube-proxy-restart || true)"
if [ -n "$nft_scenarios" ]; then
	cluster nftproxy
	for s in $nft_scenarios; do
		case "$s" in
		restart) measure restart restart ;;
		kill) measure kill kill_proxy ;;
		apiserver) measure apiserver apiserver_down ;;
		*) echo "rollout: unknown scenario $s" >&2; exit 2 ;;
		esac
	done
fi
if echo "$SCENARIOS" | grep -qw -e migrate -e kube-proxy-restart; then
	cluster kube-proxy
	if echo "$SCENARIOS" | grep -qw kube-proxy-restart; then measure kube-proxy-restart restart kube-proxy; fi
	if echo "$SCENARIOS" | grep -qw migrate; then measure migrate migrate; fi
fi
cp "$out/rows.md" "$out/results.md"
cat "$out/results.md"
