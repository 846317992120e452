#!/usr/bin/env bash
# Builds container images without a registry or a base image, as OCI
# archives that `ctr images import` loads: every image is `FROM scratch`
# (buildah, --storage-driver vfs, a store of our own) plus files from this
# machine. Prints the archive's path on stdout; progress goes to stderr.
#
#   hack/images.sh nftproxy   localhost/nftproxy:VERSION  (IMAGE= to rename)
#                             bin/nftproxy-image.tar: the static binary only
#   hack/images.sh pause      the sandbox ("pause") image: agnhost's pause
#   hack/images.sh agnhost    the e2e suite's test image: agnhost, plus the
#                             shell tools its tests exec (below)
#   hack/images.sh coredns    CoreDNS (hack/tools/coredns)
#   hack/images.sh busybox    the suite's busybox image: Debian's static busybox
#   hack/images.sh dnsutils   the suite's glibc DNS test image: dig, getent
#                             and the shell tools, on glibc
#   hack/images.sh distroless-iptables  the suite's host-exec image: the
#                             shell tools (it reads /proc/net/nf_conntrack)
#   hack/images.sh regression-issue-74839  the suite's "boom" server
#   hack/images.sh kube-proxy upstream kube-proxy of the pinned version, with
#                             nft (its nftables mode runs the nft binary)
#
# The test images are cached in ${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy/
# images, keyed by their version and this script's hash (a changed recipe
# builds them again); nftproxy's is rebuilt every time.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nftproxy"

. hack/cluster/images.env
recipe="$(cat hack/images.sh hack/cluster/images.env | sha256sum | cut -c1-12)"

buildah_() {
	buildah --root "$cache/buildah/root" --runroot "$cache/buildah/run" --storage-driver vfs "$@"
}

# build NAME ARCHIVE ROOTFS ENTRYPOINT_JSON [CMD_JSON]: an image from scratch
# holding ROOTFS's tree, written to ARCHIVE (temporary name, then renamed).
build() {
	local name="$1" archive="$2" rootfs="$3" entrypoint="$4" cmd="${5:-}" ctr tmp
	ctr="$(buildah_ from scratch)"
	buildah_ copy -q "$ctr" "$rootfs" / >/dev/null
	buildah_ config --entrypoint "$entrypoint" "$ctr"
	if [ -n "$cmd" ]; then buildah_ config --cmd "$cmd" "$ctr"; fi
	buildah_ commit -q --rm "$ctr" "$name" >/dev/null
	mkdir -p "$(dirname "$archive")"
	tmp="$archive.tmp"
	rm -f "$tmp"
	buildah_ push -q "$name" "oci-archive:$tmp:$name" >&2
	buildah_ rmi "$name" >/dev/null
	mv "$tmp" "$archive"
}

# copy_with_libs ROOTFS BINARY...: each dynamically linked BINARY and the
# shared libraries ldd names, at the same paths inside ROOTFS.
copy_with_libs() {
	local rootfs="$1" f; shift
	for f in "$@" $(ldd "$@" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u); do
		mkdir -p "$rootfs$(dirname "$f")"
		cp -L "$f" "$rootfs$f"
	done
}

need() {
	if [ ! -e "$1" ]; then
		echo "images: $1 not found: install Debian's $2 package" >&2; exit 1
	fi
}

# image KEY NAME FILL ENTRYPOINT_JSON [CMD_JSON]: prints the path of the
# test image NAME in the cache, KEY (its name and version) naming the
# archive there. Built when the cache lacks it: FILL ROOTFS fills a new
# ROOTFS, which becomes the image.
image() {
	local archive="$cache/images/$1-$recipe.tar" name="$2" fill="$3" entrypoint="$4" cmd="${5:-}" rootfs
	if [ ! -f "$archive" ]; then
		rootfs="$(mktemp -d)"
		trap 'rm -rf "$rootfs"' RETURN
		"$fill" "$rootfs"
		build "$name" "$archive" "$rootfs" "$entrypoint" "$cmd"
	fi
	echo "$archive"
}

# kube_binary NAME PATH: the Kubernetes binary NAME (hack/kube-binary.sh),
# installed at PATH.
kube_binary() {
	local bin
	bin="$(hack/kube-binary.sh "$1")"
	install -D -m 755 "$bin" "$2"
}

# add_busybox ROOTFS [APPLET...]: the static busybox, and a link to it in
# ROOTFS/bin for each of its applets but those named.
add_busybox() {
	local rootfs="$1" a; shift
	need /bin/busybox busybox-static
	install -D -m 755 /bin/busybox "$rootfs/bin/busybox"
	for a in $(/bin/busybox --list); do
		case " busybox $* " in *" $a "*) continue ;; esac
		ln -s busybox "$rootfs/bin/$a"
	done
}

nftproxy_image() {
	local version image rootfs
	version="$(git describe --tags --always --dirty 2>/dev/null || echo dev)"
	image="${IMAGE:-localhost/nftproxy:$version}"
	hack/build.sh >&2
	rootfs="$(mktemp -d)"
	trap 'rm -rf "$rootfs"' RETURN
	install -D -m 755 bin/nftproxy "$rootfs/usr/local/bin/nftproxy"
	build "$image" "$root/bin/nftproxy-image.tar" "$rootfs" '["/usr/local/bin/nftproxy"]'
	echo "images: built $image into bin/nftproxy-image.tar" >&2
	echo "$root/bin/nftproxy-image.tar"
}

# pause_rootfs ROOTFS: agnhost, whose pause subcommand sleeps until
# SIGINT/SIGTERM, which is all a sandbox needs from its first process
# (containerd shares no PID namespace between containers, so it reaps
# nothing).
pause_rootfs() {
	kube_binary agnhost "$1/agnhost"
}

# shell_tools ROOTFS: what the suite's tests exec in its Alpine-based
# images (/bin/sh with nc's OpenBSD flags -v -t -u -w, curl, wget, dig,
# getent, ss, ip, nslookup and coreutils), from Debian: dash and bash, nc,
# curl, wget, dig, ss and ip with their libraries, glibc's getent, and the static busybox
# for the rest. Not busybox's sh: it runs its own applets before PATH, so
# `nc` there would be busybox's nc, which has none of OpenBSD's flags. Not
# busybox's wget: linked statically against glibc, its name lookups load
# this image's NSS modules and it crashes (segmentation fault).
shell_tools() {
	local rootfs="$1"
	need /bin/dash dash
	need /bin/bash bash
	need /bin/nc.openbsd netcat-openbsd
	need /usr/bin/curl curl
	need /usr/bin/wget wget
	need /usr/bin/dig bind9-dnsutils
	need /usr/bin/getent libc-bin
	need /usr/bin/ss iproute2
	add_busybox "$rootfs" sh ash nc wget ip ss
	copy_with_libs "$rootfs" /bin/dash /bin/bash /bin/nc.openbsd /usr/bin/curl /usr/bin/wget \
		/usr/bin/dig /usr/bin/getent /usr/bin/ss /usr/bin/ip
	# glibc loads these by name at run time (NSS: /etc/hosts, then DNS), so
	# ldd does not list them.
	copy_with_libs "$rootfs" "$(dirname "$(ldd /usr/bin/getent | awk '/libc.so/ { print $3 }')")"/libnss_{files,dns}.so.2
	ln -s dash "$rootfs/bin/sh"
	ln -s nc.openbsd "$rootfs/bin/nc"
	mkdir -p "$rootfs/tmp" "$rootfs/uploads" "$rootfs/etc" "$rootfs/results"
	chmod 1777 "$rootfs/tmp"
	echo 'hosts: files dns' >"$rootfs/etc/nsswitch.conf"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$rootfs/etc/passwd"
	printf 'root:x:0:\n' >"$rootfs/etc/group"
}

agnhost_rootfs() {
	local rootfs="$1" src
	kube_binary agnhost "$rootfs/agnhost"
	# porter's TLS ports serve these (upstream's image has them in /, its
	# working directory): the files of the same Kubernetes version.
	src="$(cd hack/tools/kubernetes && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images/agnhost/porter"
	install -m 644 "$src/localhost.crt" "$src/localhost.key" "$rootfs/"
	shell_tools "$rootfs"
}

regression_74839_rootfs() {
	kube_binary regression-issue-74839 "$1/regression-issue-74839"
}

# busybox_rootfs ROOTFS: upstream's image is busybox alone, its sh included.
busybox_rootfs() {
	add_busybox "$1"
	mkdir -p "$1/tmp" "$1/etc"
	chmod 1777 "$1/tmp"
}

# kube_proxy_rootfs ROOTFS: kube-proxy and nft with its libraries. nftables
# mode needs nothing else at run time (conntrack entries are deleted over
# netlink).
kube_proxy_rootfs() {
	need /usr/sbin/nft nftables
	kube_binary kube-proxy "$1/usr/local/bin/kube-proxy"
	copy_with_libs "$1" /usr/sbin/nft
	mkdir -p "$1/tmp" "$1/run"
}

coredns_rootfs() {
	local bin="$cache/coredns-$COREDNS_VERSION"
	if [ ! -x "$bin" ]; then
		echo "images: building CoreDNS $COREDNS_VERSION (first run only)" >&2
		(cd hack/tools/coredns && CGO_ENABLED=0 nice -n 15 go build -trimpath -ldflags "-s -w" -o "$bin.tmp" .) >&2
		mv "$bin.tmp" "$bin"
	fi
	install -D -m 755 "$bin" "$1/coredns"
}

case "${1:-}" in
nftproxy) nftproxy_image ;;
pause) image pause-3.10.2 "$PAUSE_IMAGE" pause_rootfs '["/agnhost", "pause"]' ;;
agnhost) image agnhost-2.66.1 "$AGNHOST_IMAGE" agnhost_rootfs '["/agnhost"]' '["pause"]' ;;
coredns) image "coredns-$COREDNS_VERSION" "$COREDNS_IMAGE" coredns_rootfs '["/coredns"]' ;;
busybox) image busybox-1.37.0-2 "$BUSYBOX_IMAGE" busybox_rootfs '["/bin/sh"]' ;;
dnsutils) image glibc-dns-testing-2.1.1 "$DNSUTILS_IMAGE" shell_tools '["/bin/sh"]' ;;
distroless-iptables) image distroless-iptables-v0.9.9 "$DISTROLESS_IPTABLES_IMAGE" shell_tools '["/bin/sh"]' ;;
regression-issue-74839) image regression-issue-74839-1.5 "$REGRESSION_74839_IMAGE" regression_74839_rootfs '["/regression-issue-74839"]' ;;
kube-proxy) image "kube-proxy-$KUBE_VERSION" "$KUBE_PROXY_IMAGE" kube_proxy_rootfs '["/usr/local/bin/kube-proxy"]' ;;
*) echo "usage: hack/images.sh nftproxy|pause|agnhost|coredns|busybox|dnsutils|distroless-iptables|regression-issue-74839|kube-proxy" >&2; exit 2 ;;
esac
