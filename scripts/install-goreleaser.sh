#!/usr/bin/env bash
# install-goreleaser.sh: build the pinned goreleaser from the Go module
# proxy into a cache directory and print the binary's path. Idempotent.
# `make release-check` runs it to validate .goreleaser.yaml (goreleaser
# check); a release runs the same binary. The module's checksum is verified
# by the go command against sum.golang.org; the module hash below pins the
# exact source. v2.15.1 is the newest that builds with Go 1.26 here (newer
# ones need a newer Go).
# Cold (empty module and build caches) it downloads the modules goreleaser
# needs and takes a few minutes on 2 cores; later runs take no time.
#   SVC_GORELEASER_DIR  install directory (default: $XDG_CACHE_HOME or ~/.cache, /svc/goreleaser/<version>)
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
VERSION=v2.15.1
MODHASH='h1:qgg9Y4JfURDRnt43eA76QRkzlWCYIph/yz4jyQdczMs='
dir=${SVC_GORELEASER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/goreleaser/$VERSION}
bin=$dir/goreleaser

pinned() { go version -m "$1" 2>/dev/null | grep -qF "$(printf 'mod\tgithub.com/goreleaser/goreleaser/v2\t%s\t%s' "$VERSION" "$MODHASH")"; }
if [ -x "$bin" ] && pinned "$bin"; then
	echo "$bin"
	exit 0
fi
command -v go >/dev/null || { echo "install-goreleaser: the go command is needed (/usr/local/go/bin)" >&2; exit 2; }
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.tmp-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# GOFLAGS from the caller (-mod=..., -buildvcs) must not leak into a build
# of another module; GOTOOLCHAIN=local: build with this Go, never fetch one.
GOFLAGS=-trimpath GOTOOLCHAIN=local GOBIN="$tmp" go install "github.com/goreleaser/goreleaser/v2@$VERSION" >&2
if ! pinned "$tmp/goreleaser"; then
	echo "install-goreleaser: the built goreleaser is not github.com/goreleaser/goreleaser/v2 $VERSION $MODHASH: refusing to install it" >&2
	exit 1
fi
mv "$tmp/goreleaser" "$bin"
echo "$bin"
