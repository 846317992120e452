#!/usr/bin/env bash
# Checks formatting, vet (with and without the integration tag) and that
# go.mod is tidy.
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [ -n "$unformatted" ]; then
	echo "gofmt needed:"; echo "$unformatted"; exit 1
fi
go vet ./...
go vet -tags integration ./...
cp go.mod /tmp/verify.go.mod; cp go.sum /tmp/verify.go.sum
go mod tidy
if ! diff -q go.mod /tmp/verify.go.mod >/dev/null || ! diff -q go.sum /tmp/verify.go.sum >/dev/null; then
	cp /tmp/verify.go.mod go.mod; cp /tmp/verify.go.sum go.sum
	echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1
fi
echo "verify: ok"
