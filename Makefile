# The Makefile only dispatches: the logic lives in hack/*.sh.
GO ?= go

.PHONY: build test test-unit test-integration verify

build:
	hack/build.sh

test: test-unit test-integration

test-unit:
	$(GO) test ./...

# Real-kernel tests: as root, in network namespaces the tests create.
test-integration:
	hack/test-integration.sh

verify:
	hack/verify.sh

# The container image (deploy/Dockerfile) with docker, podman or buildah;
# fails with the reason when none works. IMAGE=repo:tag to name it.
.PHONY: image
image:
	hack/image.sh
