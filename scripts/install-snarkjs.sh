#!/usr/bin/env bash
# install-snarkjs.sh: install snarkjs (iden3's JavaScript Groth16 prover and
# verifier, the circom ecosystem's) into a cache directory and print the
# directory to import from (its node_modules/snarkjs). Idempotent, and
# instant when the cache is present. docs/snarkjs_test.go runs snarkjs's
# groth16.verify on svc's condition proofs (docs/INTEROP.md, "snarkjs")
# as a Groth16 verifier svc does not share any code with. The version and
# every dependency are pinned by scripts/snarkjs/package-lock.json (npm ci
# checks each tarball's sha512 integrity); this script also checks the
# lockfile's own SHA-256 and the snarkjs tarball's SHA-256, so an edited
# lockfile or a different snarkjs is refused. Never commit the installed
# package (snarkjs is GPL-3.0; it is only run by the tests).
#   SVC_SNARKJS_DIR  install directory (default: $XDG_CACHE_HOME or ~/.cache, /svc/snarkjs/<version>)
set -euo pipefail
VERSION=0.7.6
# SHA-256 of snarkjs-0.7.6.tgz as `npm pack snarkjs@0.7.6` gives it (its
# registry integrity, also in the lockfile, is
# sha512-4uH1xA5JzVU5jaaWS2fXej3+RC6L5Erhr6INTJtUA27du4Elbh4VXCeeRjB4QiwL6N6y7SNKePw5prTxyEf4Zg==).
SHA256=3a2b872e888e093ccee4a0636af4caf52a989c685926e663969a4ce8c2a8ead3
INTEGRITY=sha512-4uH1xA5JzVU5jaaWS2fXej3+RC6L5Erhr6INTJtUA27du4Elbh4VXCeeRjB4QiwL6N6y7SNKePw5prTxyEf4Zg==
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/snarkjs/package-lock.json"
dir=${SVC_SNARKJS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/snarkjs/$VERSION}
locksum=$(sha256sum "$lock" | cut -d' ' -f1)

if [ -f "$dir/.sha256" ] && [ "$(cat "$dir/.sha256")" = "$SHA256 $locksum" ] && [ -f "$dir/node_modules/snarkjs/package.json" ]; then
	echo "$dir/node_modules/snarkjs"
	exit 0
fi
command -v npm >/dev/null || { echo "install-snarkjs: npm is needed to fetch snarkjs@$VERSION (apt-get install npm)" >&2; exit 2; }
command -v node >/dev/null || { echo "install-snarkjs: node is needed to run snarkjs@$VERSION (apt-get install nodejs)" >&2; exit 2; }
grep -q "\"integrity\": \"$INTEGRITY\"" "$lock" || { echo "install-snarkjs: $lock does not pin snarkjs-$VERSION ($INTEGRITY): refusing to install" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work" "$dir.tmp"' EXIT
(cd "$work" && npm pack --silent "snarkjs@$VERSION" >/dev/null 2>&1)
got=$(sha256sum "$work/snarkjs-$VERSION.tgz" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
	echo "install-snarkjs: snarkjs-$VERSION.tgz has SHA-256 $got, want $SHA256: refusing to install it" >&2
	exit 1
fi
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
cp "$here/snarkjs/package.json" "$lock" "$dir.tmp/"
# npm ci installs exactly the lockfile's tree and fails on any integrity
# mismatch; no install scripts run.
(cd "$dir.tmp" && npm ci --ignore-scripts --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
got=$(node -p "require('$dir.tmp/node_modules/snarkjs/package.json').version")
[ "$got" = "$VERSION" ] || { echo "install-snarkjs: installed snarkjs $got, want $VERSION" >&2; exit 1; }
echo "$SHA256 $locksum" >"$dir.tmp/.sha256"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir/node_modules/snarkjs"
