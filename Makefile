# The Makefile only dispatches: the logic lives in hack/*.sh.
GO ?= go

.PHONY: build test test-unit test-integration test-e2e demo verify

build:
	hack/build.sh

test: test-unit test-integration test-e2e

test-unit:
	$(GO) test ./...

# Real-kernel tests: as root, in network namespaces the tests create.
test-integration:
	hack/test-integration.sh

# The real nftproxy against a real kube-apiserver and etcd, as root.
test-e2e:
	hack/test-e2e.sh

# A tour: API server, Services of each type, backends, nftproxy, requests.
demo:
	hack/demo.sh

verify:
	hack/verify.sh

# The container image (deploy/Dockerfile) with docker, podman or buildah;
# fails with the reason when none works. IMAGE=repo:tag to name it.
.PHONY: image
image:
	hack/image.sh

# Benchmarks (root; own network namespaces; not part of `make test`).
# BENCH_ARGS passes flags, e.g. BENCH_ARGS="-sizes 1000x10 -runs 3".
.PHONY: bench bench-dataplane bench-repair
bench:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench.sh

bench-dataplane:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench-dataplane.sh

bench-repair:
	BENCH_ARGS="$(BENCH_ARGS)" hack/bench-repair.sh
