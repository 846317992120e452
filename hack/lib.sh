# Sourced by the hack/ scripts that run outside the lab cluster (the
# benchmarks, the end-to-end tests and the trace examples), after
# they cd to the repository root: the checks they make before they start
# and how a benchmark command is run.

# need_root NAME WHY exits unless the script runs as root; WHY says what
# it needs root for.
need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "$1: needs root ($2)" >&2
		exit 1
	fi
}

# need_etcd NAME exits unless etcd is on PATH (the tests start their own
# etcd for a real kube-apiserver).
need_etcd() {
	if ! command -v etcd >/dev/null; then
		echo "$1: etcd not found; install Debian's etcd-server package" >&2
		exit 1
	fi
}

# run_bench NAME PACKAGE ARGS... builds PACKAGE into bin/NAME and replaces
# the shell with it at a low priority, with ARGS and then $BENCH_ARGS, so
# that a benchmark shares the machine without slowing its other work.
run_bench() {
	local name="$1" pkg="$2"
	shift 2
	mkdir -p bin
	go build -o "bin/$name" "$pkg"
	# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
	exec nice -n 10 "bin/$name" "$@" ${BENCH_ARGS:-}
}
