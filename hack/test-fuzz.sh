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
#
# Go's fuzzing coordinator (up to Go 1.26) can end a run whose -fuzztime
# ran out with a bare "context deadline exceeded" and no failing input: a
# race in its own shutdown, seen here on a loaded machine. A run that fails
# so, and writes no new input to testdata/fuzz/, is reported and not
# counted; every real failure writes the input that caused it.
failed=0
while read -r dir name; do
	[[ "$name" =~ $only ]] || continue
	echo "test-fuzz: $name in ./$dir for $fuzztime"
	corpus="$dir/testdata/fuzz/$name"
	before="$(ls "$corpus" 2>/dev/null | wc -l)"
	out="$(mktemp)"
	if go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "./$dir" 2>&1 | tee "$out"; then
		:
	elif [ "$(ls "$corpus" 2>/dev/null | wc -l)" = "$before" ] && [ "$(grep -c -- '^--- FAIL' "$out")" = 1 ] &&
		[ "$(grep -A1 -- '^--- FAIL' "$out" | tail -n 1)" = "    context deadline exceeded" ]; then
		echo "test-fuzz: $name: the coordinator's deadline race (context deadline exceeded, no failing input): not counted"
	else
		failed=1
	fi
	rm -f "$out"
done <<< "$targets"
exit "$failed"
