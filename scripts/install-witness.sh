#!/usr/bin/env bash
# install-witness.sh: build the pinned omniwitness (transparency-dev/witness's
# C2SP tlog-witness server) from the Go module proxy into a cache directory
# and print the binary's path. Idempotent. The transparency log's tests
# (pkg/core/tlog/...) run it on loopback as a real witness: explicit --listen and
# --metrics_listen addresses and an --additional_logs file, so it makes no
# outbound calls.
# The module proxy serves only pseudo-versions of the witness module; the
# version and module hash below pin the exact source (the go command checks
# the module against sum.golang.org). The build happens outside the
# repository, so svc's go.mod is untouched and nothing is committed. Cold
# (empty module and build caches) it takes about 4 minutes on 2 shared
# cores; later runs take no time.
# With --print-if-installed it only prints the cached binary's path (exit
# status 1, nothing printed, when it is not built yet): tests use it.
#   SVC_WITNESS_DIR  install directory (default: $XDG_CACHE_HOME or ~/.cache, /svc/omniwitness/<version>)
set -euo pipefail
# shellcheck source=lib/goinstall.sh
. "$(dirname "$0")/lib/goinstall.sh"
export PATH="$PATH:/usr/local/go/bin"
MODULE=github.com/transparency-dev/witness
VERSION=v0.0.0-20260720115447-2e1c6971d19e
MODHASH='h1:YGwUZRKoG5GjoissskUoEumfgaFtXuon4L3j6+SBnrc='
dir=${SVC_WITNESS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/omniwitness/$VERSION}

go_install_pinned omniwitness "$MODULE" "$MODULE/cmd/omniwitness" "$VERSION" "$MODHASH" "$dir" "${1:-}"
