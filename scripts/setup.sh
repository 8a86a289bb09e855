#!/usr/bin/env bash
# setup.sh: install what svc's build, demo and tests need on a fresh Debian
# machine (the Go toolchain is expected on PATH or at /usr/local/go/bin).
# Idempotent: installs only what is missing. Needs root (or sudo) for apt.
set -euo pipefail

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "setup: Go 1.26+ is required: install it from the Go project's release archive" >&2; exit 2; }

missing=()
command -v openssl >/dev/null || missing+=(openssl)
command -v jq >/dev/null || missing+=(jq)
command -v xxd >/dev/null || missing+=(xxd)
command -v npm >/dev/null || missing+=(npm)     # fetches the pinned ONNX Runtime (scripts/install-ort.sh)
command -v gcc >/dev/null || missing+=(gcc)     # cgo, for ONNX Runtime
if ((${#missing[@]})); then
	echo "setup: installing ${missing[*]} (interop tests, the by-hand recipe and ONNX Runtime use them)" >&2
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

go mod download
