#!/usr/bin/env bash
# install-softhsm.sh: make SoftHSM2 (Debian's softhsm2 2.6.1: a PKCS#11
# module that supports CKM_EC_EDWARDS_KEY_PAIR_GEN and CKM_EDDSA) and
# OpenSC's pkcs11-tool available for the PKCS#11 signer tests, then print
# the module's path (libsofthsm2.so). Idempotent: installs nothing when the
# module and softhsm2-util are already there. The tests create throwaway
# tokens under a temporary SOFTHSM2_CONF and never touch the system's
# token directory. Without the module they skip and say so, unless
# SVC_REQUIRE_SOFTHSM=1 (make unit sets it).
set -euo pipefail
find_module() {
	for p in /usr/lib/softhsm/libsofthsm2.so /usr/lib/*-linux-gnu/softhsm/libsofthsm2.so /usr/local/lib/softhsm/libsofthsm2.so; do
		if [ -f "$p" ]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
if m=$(find_module) && command -v softhsm2-util >/dev/null && command -v pkcs11-tool >/dev/null; then
	echo "$m"
	exit 0
fi
command -v apt-get >/dev/null || { echo "install-softhsm: apt-get not found: install SoftHSM2 (>= 2.6, with EdDSA) and OpenSC's pkcs11-tool with your package manager" >&2; exit 2; }
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
pkgs="softhsm2 opensc"
# Package lists may be stale on a fresh machine: update once if the install fails.
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $pkgs >&2; then
	$sudo apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $pkgs >&2
fi
find_module || { echo "install-softhsm: softhsm2 installed but libsofthsm2.so not found" >&2; exit 2; }
