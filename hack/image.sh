#!/usr/bin/env bash
# Builds the nftproxy container image from deploy/Dockerfile with the first
# container engine that works: docker (its daemon must answer), podman, or
# buildah. With no working engine it says why and exits 2.
#
#   hack/image.sh [--dry-run]     IMAGE=REPO:TAG ENGINE=docker|podman|buildah
#
# --dry-run prints the engine found (or why none) and the build command,
# builds nothing, and exits 0 either way.
set -euo pipefail
cd "$(dirname "$0")/.."

dry_run=0
if [ "${1:-}" = "--dry-run" ]; then dry_run=1; fi
version="$(git describe --tags --always --dirty 2>/dev/null || echo dev)"
image="${IMAGE:-nftproxy:${version}}"

# engine_works prints nothing and succeeds when engine $1 can build now;
# otherwise it prints why not.
engine_works() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "$1: not installed"; return 1
	fi
	case "$1" in
	docker)
		if ! docker info >/dev/null 2>&1; then
			echo "docker: installed, but its daemon does not answer (is dockerd running? can this user reach its socket?)"
			return 1
		fi ;;
	podman)
		if ! podman info >/dev/null 2>&1; then
			echo "podman: installed, but 'podman info' fails"; return 1
		fi ;;
	esac
}

candidates=(docker podman buildah)
if [ -n "${ENGINE:-}" ]; then candidates=("$ENGINE"); fi
engine=""
reasons=()
for c in "${candidates[@]}"; do
	if why="$(engine_works "$c")"; then engine="$c"; break; fi
	reasons+=("$why")
done

if [ -z "$engine" ]; then
	{
		echo "image: no working container engine, nothing built:"
		printf '  %s\n' "${reasons[@]}"
		echo "  (the binary alone: make build; the image needs docker, podman or buildah)"
	} >&2
	if [ "$dry_run" = 1 ]; then exit 0; fi
	exit 2
fi

case "$engine" in
buildah) cmd=(buildah bud) ;;
*) cmd=("$engine" build) ;;
esac
cmd+=(-f deploy/Dockerfile --build-arg "VERSION=${version}" -t "$image" .)
echo "image: ${cmd[*]}"
if [ "$dry_run" = 1 ]; then exit 0; fi
"${cmd[@]}"
echo "image: built ${image} with ${engine}"
