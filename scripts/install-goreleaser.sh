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
# shellcheck source=lib/goinstall.sh
. "$(dirname "$0")/lib/goinstall.sh"
export PATH="$PATH:/usr/local/go/bin"
VERSION=v2.15.1
MODHASH='h1:qgg9Y4JfURDRnt43eA76QRkzlWCYIph/yz4jyQdczMs='
dir=${SVC_GORELEASER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/goreleaser/$VERSION}

go_install_pinned goreleaser github.com/goreleaser/goreleaser/v2 github.com/goreleaser/goreleaser/v2 "$VERSION" "$MODHASH" "$dir"
