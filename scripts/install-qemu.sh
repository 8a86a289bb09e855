#!/usr/bin/env bash
# install-qemu.sh: make qemu-user's x86-64 emulator available (Debian's
# qemu-user package) for the cross-CPU Bounded Inference tests, then print
# its path. Idempotent: does nothing when qemu-x86_64 is already on PATH.
# The tests run the pinned ONNX Runtime under `qemu-x86_64 -cpu Haswell`
# (AVX2+FMA kernels) and `-cpu Nehalem` (SSE4.2 kernels); without the
# emulator they skip and say so.
set -euo pipefail
if q=$(command -v qemu-x86_64); then
	echo "$q"
	exit 0
fi
case "$(uname -m)" in
x86_64) ;;
*) echo "install-qemu: the cross-CPU tests emulate x86-64 CPUs on an x86-64 host; this is $(uname -m)" >&2; exit 2 ;;
esac
command -v apt-get >/dev/null || { echo "install-qemu: apt-get not found: install qemu-user (qemu-x86_64) with your package manager" >&2; exit 2; }
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
# Package lists may be stale on a fresh machine: update once if the install fails.
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends qemu-user >&2; then
	$sudo apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends qemu-user >&2
fi
command -v qemu-x86_64
