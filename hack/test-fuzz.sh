#!/usr/bin/env bash
# Runs every Go fuzz target (func FuzzX(f *testing.F) in a _test.go file)
# for a bounded time each, one at a time: go test takes one -fuzz pattern
# per package run. FUZZTIME sets the time per target (default 30s, or a
# count such as 1000x); FUZZ=regex runs only the targets it matches.
# A failure leaves the crashing input in the package's testdata/fuzz/FuzzX/,
# where plain `go test` replays it from then on: fix the code and commit the
# input as a regression case.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-30s}"
only="${FUZZ:-.}"
targets="$(grep -rE --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' . |
	sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' | sort -u)"
if [ -z "$targets" ]; then
	echo "test-fuzz: no fuzz targets found" >&2
	exit 1
fi
failed=0
while read -r dir name; do
	[[ "$name" =~ $only ]] || continue
	echo "test-fuzz: $name in ./$dir for $fuzztime"
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "./$dir"; then
		failed=1
	fi
done <<< "$targets"
exit "$failed"
