#!/usr/bin/env bash
# install-chromium.sh: make sure a headless-capable Chromium is installed
# for the browser tests (pkg/service/dashboard, cmd/svc-verify-wasm) and print its
# path. Idempotent: does nothing when one is found.
#   SVC_CHROMIUM  use this browser binary instead (nothing is installed)
# Chromium comes from Debian's `chromium` package (about a minute on a
# fresh machine); needs root or sudo for apt-get.
set -euo pipefail
if [ -n "${SVC_CHROMIUM:-}" ]; then
	[ -x "$SVC_CHROMIUM" ] || { echo "install-chromium: SVC_CHROMIUM=$SVC_CHROMIUM is not an executable" >&2; exit 2; }
	echo "$SVC_CHROMIUM"
	exit 0
fi
find_browser() {
	for b in chromium chromium-browser google-chrome-stable google-chrome headless-shell; do
		if p=$(command -v "$b" 2>/dev/null); then echo "$p"; return 0; fi
	done
	return 1
}
if p=$(find_browser); then
	echo "$p"
	exit 0
fi
command -v apt-get >/dev/null || { echo "install-chromium: no Chromium found and no apt-get: install Chromium and set SVC_CHROMIUM to its path" >&2; exit 2; }
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "install-chromium: installing Debian's chromium package (the browser tests drive it headless)" >&2
$sudo apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
find_browser || { echo "install-chromium: apt-get installed chromium but no chromium binary is on PATH" >&2; exit 1; }
