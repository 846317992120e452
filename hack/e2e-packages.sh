#!/usr/bin/env bash
# Lists the integration packages that need a real kube-apiserver: those
# that import integration/apiserver or integration/e2e (in code or tests).
# hack/test-e2e.sh runs them; with --others, lists the rest, which
# hack/test-integration.sh runs.
set -euo pipefail
cd "$(dirname "$0")/.."
want=1
if [ "${1:-}" = "--others" ]; then want=0; fi
go list -tags integration \
	-f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' \
	./integration/... |
	awk -v want="$want" '{
		api = 0
		for (i = 1; i <= NF; i++) if ($i ~ /\/integration\/(apiserver|e2e)$/) api = 1
		if (api == want) print $1
	}'
