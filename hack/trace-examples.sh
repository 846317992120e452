#!/usr/bin/env bash
# Prints, or with --update writes, the `nftproxy trace` examples of
# README.md, docs/operations.md and docs/trace.md: real output, read from the
# kernel of a scratch network namespace that `nftproxy apply` programmed with
# examples/ and the policy Services below. Needs root. It creates its own
# namespace and removes it on exit; it never touches the machine's own.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
. hack/lib.sh
need_root trace-examples "it programs a network namespace of its own"
hack/build.sh >&2
bin="$PWD/bin/nftproxy"
ns="trace-examples-$$"
dir="$(mktemp -d)"
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
ip netns add "$ns"
in_ns() { nsenter --net="/run/netns/$ns" "$@"; }
# The node's addresses (examples/node.yaml), on a link of the namespace.
ip -n "$ns" link set lo up
ip -n "$ns" link add eth0 type veth peer name eth1
ip -n "$ns" addr add 198.51.100.1/24 dev eth0
ip -n "$ns" addr add fd00:198:51:100::1/64 dev eth0 nodad
ip -n "$ns" link set eth0 up
ip -n "$ns" link set eth1 up
cp -r examples "$dir/examples"
cat >"$dir/config.yaml" <<'EOF'
apiVersion: nftproxy.io/v1alpha1
kind: ProxyConfiguration
clusterCIDR: 10.244.0.0/16,fd00:10:244::/48
EOF
cat >"$dir/policies.yaml" <<'EOF'
# externalTrafficPolicy: Local, and the only endpoint on another node.
apiVersion: v1
kind: Service
metadata: {name: local, namespace: demo}
spec:
  type: NodePort
  clusterIP: 10.96.0.70
  clusterIPs: [10.96.0.70]
  externalTrafficPolicy: Local
  ports:
  - {name: http, protocol: TCP, port: 80, targetPort: 8080, nodePort: 30090}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: local-1
  namespace: demo
  labels: {kubernetes.io/service-name: local}
addressType: IPv4
ports:
- {name: http, protocol: TCP, port: 8080}
endpoints:
- addresses: [10.244.2.7]
  conditions: {ready: true}
  nodeName: node-2
---
# A load balancer that only 192.0.2.0/24 may reach.
apiVersion: v1
kind: Service
metadata: {name: private, namespace: demo}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.80
  clusterIPs: [10.96.0.80]
  loadBalancerSourceRanges: [192.0.2.0/24]
  ports:
  - {name: https, protocol: TCP, port: 443, targetPort: 8443, nodePort: 30444}
status:
  loadBalancer:
    ingress:
    - ip: 203.0.113.40
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: private-1
  namespace: demo
  labels: {kubernetes.io/service-name: private}
addressType: IPv4
ports:
- {name: https, protocol: TCP, port: 8443}
endpoints:
- addresses: [10.244.1.8]
  conditions: {ready: true}
  nodeName: node-1
---
# sessionAffinity: ClientIP for 10 minutes.
apiVersion: v1
kind: Service
metadata: {name: sticky, namespace: demo}
spec:
  clusterIP: 10.96.0.60
  clusterIPs: [10.96.0.60]
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 600}}
  ports:
  - {name: http, protocol: TCP, port: 80, targetPort: 8080}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: sticky-1
  namespace: demo
  labels: {kubernetes.io/service-name: sticky}
addressType: IPv4
ports:
- {name: http, protocol: TCP, port: 8080}
endpoints:
- addresses: [10.244.1.9]
  conditions: {ready: true}
  nodeName: node-1
- addresses: [10.244.3.9]
  conditions: {ready: true}
  nodeName: node-3
EOF
cd "$dir" # so that the commands shown name the files as above
in_ns "$bin" apply -f examples -f policies.yaml --config config.yaml >&2
# One connection attempt from the node to demo/sticky, so that the kernel
# remembers the node as a client of one endpoint (session affinity records
# the choice as the first packet goes out; nobody answers it here).
ip -n "$ns" route add default via 198.51.100.254 dev eth0
in_ns timeout 2 bash -c 'exec 3<>/dev/tcp/10.96.0.60/80' 2>/dev/null || true
# The commands are those the documents ask for, one per marker line
# "<!-- trace: ARGS -->" followed by a code block; --update rewrites the
# blocks with the output, otherwise it is printed.
docs=(README.md docs/operations.md docs/trace.md)
mkdir -p "$dir/out"
: >"$dir/index"
n=0
while IFS= read -r cmd; do
	n=$((n + 1))
	read -ra args <<<"$cmd"
	{
		echo "\$ nftproxy trace $cmd"
		(cd "$dir" && in_ns "$bin" trace "${args[@]}" 2>&1) || echo "(exit $?)"
	} >"$dir/out/$n.txt"
	printf '%s\t%s\n' "$cmd" "$dir/out/$n.txt" >>"$dir/index"
done < <(cd "$repo" && sed -n 's/^[[:space:]]*<!-- trace: \(.*\) -->$/\1/p' "${docs[@]}" | sort -u)
if [ "${1:-}" != "--update" ]; then
	cat "$dir"/out/*.txt
	exit 0
fi
for doc in "${docs[@]}"; do
	awk -v index_file="$dir/index" '
		BEGIN { while ((getline line < index_file) > 0) { split(line, kv, "\t"); out[kv[1]] = kv[2] } }
		skip { if ($0 == indent "```") { skip = 0; print } ; next }
		{ print }
		/^[ \t]*<!-- trace: .* -->$/ {
			indent = $0; sub(/<!--.*/, "", indent)
			pending = substr($0, length(indent) + 13, length($0) - length(indent) - 16)
			next
		}
		pending != "" && $0 == indent "```" {
			while ((getline l < out[pending]) > 0) print (l == "" ? "" : indent l)
			close(out[pending]); skip = 1; pending = ""; next
		}
		{ pending = "" }
	' "$repo/$doc" >"$dir/doc.tmp"
	cp "$dir/doc.tmp" "$repo/$doc"
done
echo "trace-examples: rewrote the trace output in ${docs[*]}" >&2
