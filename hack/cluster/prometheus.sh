# Prometheus on the cluster of `make cluster` (sourced by hack/test-node.sh,
# after env.sh): Debian's prometheus, run for a bounded time in node 1's
# network namespace, where it reaches every node's address, scraping every
# endpoint of the nftproxy-metrics Service (the chart's metrics.service)
# every 2 s with deploy/monitoring/alerts.yaml loaded. Debian builds it
# without Kubernetes service discovery, so the targets are a file written
# from the Service's EndpointSlices, each labelled with its node's name as
# the chart's ServiceMonitor does. Everything lives in one temporary
# directory; prom_stop ends the process by its pid and removes it.

PROM_DIR=""
PROM_PID=""
PROM_URL="http://127.0.0.1:9090"

# prom_targets: file_sd targets from the metrics Service's EndpointSlices.
prom_targets() {
	kubectl_ -n kube-system get endpointslices -l kubernetes.io/service-name=nftproxy-metrics -o json |
		jq '[.items[] | .ports[0].port as $p | .endpoints[] | select(.conditions.ready)
			| {targets: [.addresses[0] + ":" + ($p | tostring)], labels: {node: .nodeName}}]'
}

# prom_start NODES: starts Prometheus once the Service has NODES ready
# endpoints, and waits until it scrapes them all.
prom_start() {
	local want="$1" i
	for i in $(seq 1 60); do
		[ "$(prom_targets | jq length)" = "$want" ] && break
		sleep 1
	done
	PROM_DIR="$(mktemp -d /tmp/nftproxy-prometheus.XXXXXX)"
	prom_targets >"$PROM_DIR/targets.json"
	cat >"$PROM_DIR/prometheus.yml" <<CONFIG
global:
  scrape_interval: 2s
  evaluation_interval: 2s
rule_files: ["$PWD/deploy/monitoring/alerts.yaml"]
scrape_configs:
- job_name: nftproxy
  file_sd_configs:
  - files: ["$PROM_DIR/targets.json"]
CONFIG
	# timeout bounds the run even if nobody stops it; it passes SIGTERM on.
	nsenter --net="$NODE_NETNS" -- timeout 900 prometheus --config.file="$PROM_DIR/prometheus.yml" \
		--storage.tsdb.path="$PROM_DIR/data" --web.listen-address=127.0.0.1:9090 \
		>"$PROM_DIR/prometheus.log" 2>&1 &
	PROM_PID=$!
	wait_for "Prometheus to start" 60 in_node curl -sf "$PROM_URL/-/ready"
	wait_for "Prometheus to scrape $want targets" 60 prom_up "$want"
}

# prom_up N: N targets are up.
prom_up() {
	in_node curl -sf "$PROM_URL/api/v1/query" --data-urlencode 'query=count(up{job="nftproxy"} == 1)' |
		jq -e --arg n "$1" '.data.result[0].value[1] == $n' >/dev/null
}

prom_stop() {
	if [ -n "$PROM_PID" ]; then
		kill -TERM "$PROM_PID" 2>/dev/null || true
		wait "$PROM_PID" 2>/dev/null || true
		PROM_PID=""
	fi
	if [ -n "$PROM_DIR" ]; then rm -rf "$PROM_DIR"; PROM_DIR=""; fi
}

# monitoring_checks NS: with the caller's check, ok and fail (hack/test-node.sh):
# Prometheus scrapes every nftproxy Pod; a Service created in NS changes
# EndpointSlices, so that network programming latency has observations;
# every expression of the rules and the dashboard returns data; the rules
# load and evaluate; promtool checks them and runs both unit tests. Outputs
# go to bin/monitoring/.
monitoring_checks() {
	local ns="$1" out="bin/monitoring" rules=deploy/monitoring/alerts.yaml
	mkdir -p "$out"
	go build -o bin/promcheck ./hack/promcheck
	prom_start "$NODES"
	ok "Prometheus scrapes every nftproxy Pod: $(jq -c '[.[] | .targets[0] + " node=" + .labels.node]' "$PROM_DIR/targets.json")"
	for i in 1 2; do
		hack/kubectl.sh -n "$ns" create service clusterip "churn-$i" --tcp=80:8080 >/dev/null
		hack/kubectl.sh -n "$ns" set selector service "churn-$i" app=backend >/dev/null
		sleep 5
	done
	if in_node bin/promcheck -url "$PROM_URL" -rate 1m -wait 90s >"$out/promcheck.txt"; then
		ok "every expression of the rules and the dashboard returns data ($(grep -c '^ok' "$out/promcheck.txt") of them; $out/promcheck.txt)"
	else
		fail "expressions without data: $(grep '^FAIL' "$out/promcheck.txt" | paste -sd';')"
	fi
	cat "$out/promcheck.txt" >&2
	check "Prometheus loaded and evaluates every rule" "$(grep -c '^  - alert:' "$rules")" rules_ok
	in_node curl -sf "http://$NODE_IP:10249/metrics" >"$out/metrics-$(node_name 1).txt"
	in_node curl -sf "$PROM_URL/federate" --get --data-urlencode 'match[]={job="nftproxy"}' >"$out/federate.txt"
	if in_node bin/promcheck -url "$PROM_URL" -series "$out/scraped_test.yaml" -range 1m -step 2s -rules "$rules"; then
		ok "the rules' series as scraped written as a promtool test ($out/scraped_test.yaml)"
	else
		fail "could not write the rules' series as scraped"
	fi
	promtool_ check rules "$rules"
	promtool_ test rules deploy/monitoring/alerts_test.yaml
	promtool_ test rules "$out/scraped_test.yaml"
	prom_stop
}

# rules_ok: how many rules Prometheus evaluated without an error.
rules_ok() {
	in_node curl -sf "$PROM_URL/api/v1/rules" | jq '[.data.groups[].rules[] | select(.health == "ok" and .lastEvaluation != "0001-01-01T00:00:00Z")] | length'
}

promtool_() {
	local got
	if got="$(promtool "$@" 2>&1)"; then ok "promtool $*: $(echo "$got" | tr '\n' ' ')"
	else fail "promtool $*: $got"; fi
}
