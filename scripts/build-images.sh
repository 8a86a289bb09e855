#!/usr/bin/env bash
# build-images.sh: build the svc and svc-verify container images offline,
# with Buildah, from container/svc.Dockerfile and container/svc-verify.Dockerfile
# exactly as goreleaser's dockers_v2 builds them: a build context holding only
# linux/amd64/<binary>, and the same build arguments.
#
#   scripts/build-images.sh [TAG]      (default TAG: dev)
#
# prints the two image names. Needs buildah (Debian: apt-get install buildah)
# and Go. No registry is reached:
#   - svc-verify is FROM scratch;
#   - svc's release base (gcr.io/distroless/cc-debian12) cannot be pulled
#     offline, so unless SVC_IMAGE_BASE names another base, an equivalent one
#     is assembled from this machine's Debian 12 files: the shared libraries
#     svc links (glibc), libstdc++ and libgcc_s (what ONNX Runtime and
#     PKCS#11 modules need), the CA certificates, /etc/passwd and /etc/group
#     with distroless's nonroot user (65532) and its home, /tmp. No shell.
#
# Environment:
#   SVC_BIN_DIR        directory holding prebuilt svc and svc-verify (e.g. a
#                      goreleaser dist/ binary); default: build them here
#                      (svc with cgo, svc-verify without, -trimpath)
#   SVC_IMAGE_PREFIX   image name prefix (default localhost/svc-gov)
#   SVC_IMAGE_BASE     base image of svc (default: the assembled one,
#                      localhost/svc-cc-base:debian12)
#   SVC_STORAGE_DRIVER containers/storage driver given to buildah
#                      (--storage-driver; e.g. vfs where overlay mounts are not
#                      allowed); run podman with the same one to see the images
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
TAG=${1:-dev}
PREFIX=${SVC_IMAGE_PREFIX:-localhost/svc-gov}
buildah() { command buildah ${SVC_STORAGE_DRIVER:+--storage-driver "$SVC_STORAGE_DRIVER"} "$@"; }
command -v buildah >/dev/null || { echo "build-images: buildah is needed (apt-get install buildah)" >&2; exit 2; }
[ "$(uname -m)" = x86_64 ] || { echo "build-images: builds linux/amd64 images only (this is $(uname -m))" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ctx=$work/context
mkdir -p "$ctx/linux/amd64"

if [ -n "${SVC_BIN_DIR:-}" ]; then
	cp "$SVC_BIN_DIR/svc" "$SVC_BIN_DIR/svc-verify" "$ctx/linux/amd64/"
else
	ld="-s -w -X github.com/svc-gov/svc/pkg/app/cli/clicore.version=$TAG"
	CGO_ENABLED=1 go build -trimpath -ldflags "$ld" -o "$ctx/linux/amd64/svc" ./cmd/svc
	CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$ctx/linux/amd64/svc-verify" ./cmd/svc-verify
fi

base=${SVC_IMAGE_BASE:-}
if [ -z "$base" ]; then
	base=localhost/svc-cc-base:debian12
	grep -q '^VERSION_ID="12"' /etc/os-release 2>/dev/null ||
		echo "build-images: warning: not Debian 12: the assembled base holds this machine's libraries, not distroless cc-debian12's" >&2
	root=$work/base
	mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/home/nonroot" "$root/usr/local/bin"
	chmod 1777 "$root/tmp"
	# The libraries svc links and the loader, then libstdc++ and libgcc_s
	# (and what they link) for the libraries svc loads itself.
	libs=$(ldd "$ctx/linux/amd64/svc" | awk '/=>/ {print $3} /^\t\// {print $1}')
	for l in libstdc++.so.6 libgcc_s.so.1; do
		# awk reads ldconfig's output to the end: an awk that exits early
		# leaves ldconfig a closed pipe (SIGPIPE: status 141 under pipefail).
		p=$(ldconfig -p | awk -v l="$l" '!found && $1 == l && /x86-64/ {print $NF; found = 1}')
		[ -n "$p" ] || { echo "build-images: $l not found (apt-get install libstdc++6)" >&2; exit 2; }
		libs="$libs $p $(ldd "$p" | awk '/=>/ {print $3} /^\t\// {print $1}')"
	done
	for l in $(printf '%s\n' $libs | sort -u); do
		cp --parents -L "$l" "$root/"
	done
	cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$root/etc/group"
	printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
	c=$(buildah from scratch)
	buildah copy --quiet --chown 0:0 "$c" "$root" / >/dev/null
	buildah copy --quiet --chown 65532:65532 "$c" "$work/base/home/nonroot" /home/nonroot >/dev/null
	buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt --user 65532:65532 --workingdir /home/nonroot "$c"
	buildah commit --quiet --rm --format docker "$c" "$base" >/dev/null
fi

revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
created=$(git log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
for img in svc svc-verify; do
	buildah bud --quiet --format docker --layers=false \
		--build-arg BASE="$base" --build-arg TARGETPLATFORM=linux/amd64 \
		--build-arg VERSION="$TAG" --build-arg REVISION="$revision" --build-arg CREATED="$created" \
		--build-arg SOURCE=https://github.com/svc-gov/svc \
		-f "container/$img.Dockerfile" -t "$PREFIX/$img:$TAG" "$ctx" >/dev/null
	echo "$PREFIX/$img:$TAG"
done
