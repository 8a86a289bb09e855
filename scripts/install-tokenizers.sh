#!/usr/bin/env bash
# install-tokenizers.sh: install Hugging Face's tokenizers library (its
# official Node.js binding, with the native library built from the Rust
# crate) into a cache directory, check the package's SHA-256, and print the
# directory to require() from. Idempotent. The tokenizer oracle tests
# (pkg/ml/tokenizer, internal/gentables) run it through Node.js to compare svc's
# token ids with Hugging Face's; the version is pinned because tokenizers
# versions can tokenize differently. Never commit the library.
#   SVC_TOKENIZERS_DIR  install directory (default: $XDG_CACHE_HOME or ~/.cache, /svc/tokenizers/<version>)
set -euo pipefail
VERSION=0.23.2
# SHA-256 of tokenizers-0.23.2.tgz as the npm registry serves it (its
# registry integrity is sha512-OS99VXTXuGuyUncICcS0hEawgKQlrFVKNU+UlzRsTN03RpOeJiCmcai5nKg3JrdIvUDo7/RC5puVEjlJd2e5oA==).
SHA256=d5196036d6e7ef5934659618ef8f911080bf95f6ba6a2e42c243196a0ea50bc4
dir=${SVC_TOKENIZERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/tokenizers/$VERSION}

case "$(uname -s)/$(uname -m)" in
Linux/x86_64) native=tokenizers.linux-x64-gnu.node ;;
Linux/aarch64) native=tokenizers.linux-arm64-gnu.node ;;
Darwin/x86_64) native=tokenizers.darwin-x64.node ;;
Darwin/arm64) native=tokenizers.darwin-arm64.node ;;
*) echo "install-tokenizers: no native tokenizers binding for $(uname -s)/$(uname -m)" >&2; exit 2 ;;
esac

if [ -f "$dir/.sha256" ] && [ "$(cat "$dir/.sha256")" = "$SHA256" ] && [ -f "$dir/$native" ]; then
	echo "$dir"
	exit 0
fi
command -v npm >/dev/null || { echo "install-tokenizers: npm is needed to fetch tokenizers@$VERSION (apt-get install npm)" >&2; exit 2; }
command -v node >/dev/null || { echo "install-tokenizers: node is needed to run tokenizers@$VERSION (apt-get install nodejs)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "tokenizers@$VERSION" >/dev/null 2>&1)
got=$(sha256sum "$work/tokenizers-$VERSION.tgz" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
	echo "install-tokenizers: tokenizers-$VERSION.tgz has SHA-256 $got, want $SHA256: refusing to install it" >&2
	exit 1
fi
tar -xzf "$work/tokenizers-$VERSION.tgz" -C "$work" package/index.js package/package.json package/LICENSE "package/$native"
rm -rf "$dir.tmp"
mkdir -p "$(dirname "$dir")"
mv "$work/package" "$dir.tmp"
echo "$SHA256" >"$dir.tmp/.sha256"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir"
