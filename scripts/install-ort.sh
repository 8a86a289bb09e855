#!/usr/bin/env bash
# install-ort.sh: install the pinned ONNX Runtime shared library into a cache
# directory and verify its SHA-256, then print its path. Idempotent.
#
# The library comes from the npm package onnxruntime-node (the only registry
# this project's machines reach that ships it); the version is pinned because
# ONNX Runtime versions give different numbers. Never commit the library.
#   SVC_ORT_DIR  install directory (default: $XDG_CACHE_HOME or ~/.cache, /svc/onnxruntime/<version>)
set -euo pipefail
VERSION=1.24.3
SHA256=92ba8e44d31b80a34f5e805076a044122c3be1fffe0d88ed790de7267b0b2682
LIB=libonnxruntime.so.1
dir=${SVC_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/onnxruntime/$VERSION}

case "$(uname -s)/$(uname -m)" in
Linux/x86_64) member=package/bin/napi-v6/linux/x64/$LIB ;;
*) echo "install-ort: no pinned ONNX Runtime for $(uname -s)/$(uname -m); set SVC_ORT_LIB to a libonnxruntime of version $VERSION" >&2; exit 2 ;;
esac

sum() { sha256sum "$1" | cut -d' ' -f1; }
if [ -f "$dir/$LIB" ] && [ "$(sum "$dir/$LIB")" = "$SHA256" ]; then
	echo "$dir/$LIB"
	exit 0
fi
command -v npm >/dev/null || { echo "install-ort: npm is needed to fetch onnxruntime-node@$VERSION (apt-get install npm)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "onnxruntime-node@$VERSION" >/dev/null)
tar -xzf "$work/onnxruntime-node-$VERSION.tgz" -C "$work" "$member"
got=$(sum "$work/$member")
if [ "$got" != "$SHA256" ]; then
	echo "install-ort: $LIB from onnxruntime-node@$VERSION has SHA-256 $got, want $SHA256: refusing to install it" >&2
	exit 1
fi
mkdir -p "$dir"
install -m 0644 "$work/$member" "$dir/$LIB.tmp"
mv "$dir/$LIB.tmp" "$dir/$LIB"
echo "$dir/$LIB"
