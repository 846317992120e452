# The Makefile only dispatches: the logic lives in hack/*.sh.
GO ?= go

.PHONY: build test test-unit test-chart test-fuzz test-integration test-e2e test-node demo verify

build:
	hack/build.sh

test: test-unit test-chart test-fuzz test-integration test-e2e test-node

test-unit:
	$(GO) test ./...

# The Helm chart against deploy/ (field by field), its schema's errors and
# helm lint, with the pinned helm and kubectl (built once); no root.
test-chart:
	hack/test-chart.sh

# Every fuzz target for FUZZTIME (default 30s) each, one at a time; no root.
test-fuzz:
	FUZZTIME="$(FUZZTIME)" FUZZ="$(FUZZ)" hack/test-fuzz.sh

# Real-kernel tests: as root, in network namespaces the tests create.
test-integration:
	hack/test-integration.sh

# The real nftproxy against a real kube-apiserver and etcd, as root.
test-e2e:
	hack/test-e2e.sh

# The real-cluster smoke test: nftproxy's DaemonSet on a 2-node cluster of
# `make cluster` (started and removed here unless one is up), traffic
# across the nodes; as root.
test-node:
	hack/test-node.sh

# A tour: API server, Services of each type, backends, nftproxy, requests.
demo:
	hack/demo.sh

verify:
	hack/verify.sh

# How our metrics differ from kube-proxy's (names, types, labels, buckets).
.PHONY: metrics-diff
metrics-diff:
	hack/metrics-diff.sh

# The container image: the static binary in an image built FROM scratch with
# buildah (no registry, no daemon) into bin/nftproxy-image.tar, an OCI
# archive for `ctr images import`, `podman load` or `skopeo copy`.
# IMAGE=repo:tag names it (default localhost/nftproxy:VERSION).
.PHONY: image
image:
	hack/images.sh nftproxy

# A Kubernetes cluster of NODES nodes (1 to 3, default 1) on this machine,
# every part real, each node a network namespace of its own on one L2
# segment, with nftproxy as its DaemonSet (PROXY=kube-proxy: upstream
# kube-proxy's DaemonSet instead). Root.
.PHONY: cluster cluster-down conformance rollout
cluster:
	hack/cluster-up.sh

cluster-down:
	hack/cluster-down.sh

# Kubernetes' [sig-network] proxy and Conformance e2e tests against that
# cluster (3 nodes unless one is up; FOCUS=regex for a subset); results in
# bin/conformance/PROXY-NODES/results.md.
conformance:
	hack/conformance.sh

# What rollouts of the proxy lose (restart, SIGKILL, API server down 60 s,
# migration from kube-proxy), on a 3-node cluster of its own; results in
# bin/rollout/results.md. SCENARIOS= picks some.
rollout:
	hack/rollout.sh

# Benchmarks (root; own network namespaces; not part of `make test`).
# BENCH_ARGS passes flags, e.g. BENCH_ARGS="-sizes 1000x10 -runs 3".
.PHONY: bench bench-dataplane bench-repair bench-agent
bench:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench.sh

bench-dataplane:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench-dataplane.sh

bench-repair:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench-repair.sh

# nftproxy and upstream kube-proxy against a real kube-apiserver (root).
bench-agent:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench-agent.sh
