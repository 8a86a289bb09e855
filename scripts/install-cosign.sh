#!/usr/bin/env bash
# install-cosign.sh: build the pinned cosign (Sigstore's CLI) from the Go
# module proxy into a cache directory and print the binary's path.
# Idempotent. The testscript testdata/script/export.txtar runs it to verify
# `svc export` bundles offline (cosign verify-blob with signed timestamps and
# no transparency log). The module's checksum is verified by the go command
# against sum.golang.org; the module hash below pins the exact source.
# Cold (empty module and build caches) it downloads about 1.8 GB of modules
# and takes about 3 minutes on 2 cores; later runs take no time.
#   SVC_COSIGN_DIR  install directory (default: $XDG_CACHE_HOME or ~/.cache, /svc/cosign/<version>)
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
VERSION=v2.6.5
MODHASH='h1:D7kFSWS2HzfD+LpEuBO89D1KfOAODlkWuuhzXS8yzi0='
dir=${SVC_COSIGN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/cosign/$VERSION}
bin=$dir/cosign

pinned() { go version -m "$1" 2>/dev/null | grep -qF "$(printf 'mod\tgithub.com/sigstore/cosign/v2\t%s\t%s' "$VERSION" "$MODHASH")"; }
if [ -x "$bin" ] && pinned "$bin"; then
	echo "$bin"
	exit 0
fi
command -v go >/dev/null || { echo "install-cosign: the go command is needed" >&2; exit 2; }
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.tmp-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# GOFLAGS from the caller (-mod=..., -buildvcs) must not leak into a build
# of another module; GOTOOLCHAIN=local: cosign v2.6.5 builds with Go 1.25+.
GOFLAGS=-trimpath GOTOOLCHAIN=local GOBIN="$tmp" go install "github.com/sigstore/cosign/v2/cmd/cosign@$VERSION" >&2
if ! pinned "$tmp/cosign"; then
	echo "install-cosign: the built cosign is not github.com/sigstore/cosign/v2 $VERSION $MODHASH: refusing to install it" >&2
	exit 1
fi
mv "$tmp/cosign" "$bin"
echo "$bin"
