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
# shellcheck source=lib/goinstall.sh
. "$(dirname "$0")/lib/goinstall.sh"
export PATH="$PATH:/usr/local/go/bin"
VERSION=v2.6.5
MODHASH='h1:D7kFSWS2HzfD+LpEuBO89D1KfOAODlkWuuhzXS8yzi0='
dir=${SVC_COSIGN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/cosign/$VERSION}

go_install_pinned cosign github.com/sigstore/cosign/v2 github.com/sigstore/cosign/v2/cmd/cosign "$VERSION" "$MODHASH" "$dir"
