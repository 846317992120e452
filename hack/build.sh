#!/usr/bin/env bash
# Builds a static nftproxy binary into bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(git describe --tags --always --dirty 2>/dev/null || echo dev)"
mkdir -p bin
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${version}" -o bin/nftproxy ./cmd/nftproxy
echo "built bin/nftproxy (${version})"
