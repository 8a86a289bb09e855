#!/usr/bin/env bash
# bench-hash.sh — compare `svc-verify hash --file` against `openssl dgst -sha256`.
#
# Creates a SIZE_MB (default 1024) MiB file of random bytes in a temporary
# directory, warms the page cache, then runs ROUNDS (default 5) alternating
# rounds of both commands, timing each with `date +%s.%N`. Prints the median
# wall time of each, the ratio ours/openssl (target <= MAX_RATIO, default
# 1.05), and checks that both printed the same digest.
#
# Environment:
#   SVC_VERIFY  path of the svc-verify binary (default ./bin/svc-verify)
#   SIZE_MB     file size in MiB (default 1024)
#   ROUNDS      number of alternating rounds (default 5)
#   MAX_RATIO   ratio above which the script exits 1 (default 1.05)
#   OPENSSL     openssl binary (default openssl)
#
# Exit status: 0 if digests agree and ratio <= MAX_RATIO; 1 if the ratio is
# too high; 2 on a digest mismatch or a usage/setup error.
set -euo pipefail

SVC_VERIFY=${SVC_VERIFY:-./bin/svc-verify}
SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-5}
MAX_RATIO=${MAX_RATIO:-1.05}
OPENSSL=${OPENSSL:-openssl}

die() { echo "bench-hash: $*" >&2; exit 2; }

[[ $SIZE_MB =~ ^[1-9][0-9]*$ ]] || die "SIZE_MB must be a positive integer, got '$SIZE_MB'"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$ROUNDS'"
command -v "$OPENSSL" >/dev/null 2>&1 || die "openssl not found ($OPENSSL)"
[[ -x $SVC_VERIFY ]] || die "svc-verify binary not found or not executable: $SVC_VERIFY (set SVC_VERIFY)"

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/bench-hash.XXXXXX")
trap 'rm -rf -- "$tmpdir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
file=$tmpdir/data.bin

echo "bench-hash: creating ${SIZE_MB} MiB file in $tmpdir" >&2
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom >"$file"

# Warm the page cache so both tools read from memory.
cat "$file" >/dev/null

# now prints the current time as seconds.nanoseconds.
now() { date +%s.%N; }

# openssl_digest FILE: prints the lowercase hex digest from openssl.
openssl_digest() {
	local out
	out=$("$OPENSSL" dgst -sha256 "$1")
	# Format: "SHA2-256(FILE)= <hex>" (or "SHA256(FILE)= <hex>").
	printf '%s\n' "${out##*= }"
}

# ours_digest FILE: prints the hex digest from svc-verify (which prints
# "sha256:<hex>" on one line).
ours_digest() {
	local out
	out=$("$SVC_VERIFY" hash --file "$1")
	out=${out%%$'\n'*}
	[[ $out == sha256:* ]] || die "svc-verify printed '$out', want 'sha256:<hex>'"
	printf '%s\n' "${out#sha256:}"
}

# median: reads numbers on stdin, prints their median.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) exit 1
		if (NR % 2) printf "%.6f\n", v[(NR + 1) / 2]
		else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}

ossl_times=()
ours_times=()
ossl_hex=""
ours_hex=""
for ((i = 1; i <= ROUNDS; i++)); do
	t0=$(now)
	h=$(openssl_digest "$file")
	t1=$(now)
	ossl_times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
	[[ -z $ossl_hex || $ossl_hex == "$h" ]] || die "openssl gave different digests across rounds"
	ossl_hex=$h

	t0=$(now)
	h=$(ours_digest "$file")
	t1=$(now)
	ours_times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
	[[ -z $ours_hex || $ours_hex == "$h" ]] || die "svc-verify gave different digests across rounds"
	ours_hex=$h

	printf 'round %d: openssl %ss  svc-verify %ss\n' "$i" "${ossl_times[-1]}" "${ours_times[-1]}"
done

ossl_med=$(printf '%s\n' "${ossl_times[@]}" | median)
ours_med=$(printf '%s\n' "${ours_times[@]}" | median)
ratio=$(awk -v a="$ours_med" -v b="$ossl_med" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')

echo "size:                ${SIZE_MB} MiB, rounds: ${ROUNDS}"
echo "openssl median:      ${ossl_med}s"
echo "svc-verify median:   ${ours_med}s"
echo "ratio ours/openssl:  ${ratio} (target <= ${MAX_RATIO})"
echo "openssl digest:      sha256:${ossl_hex}"
echo "svc-verify digest:   sha256:${ours_hex}"

if [[ $ossl_hex != "$ours_hex" ]]; then
	echo "FAIL: digests differ" >&2
	exit 2
fi
echo "digests: match"
if awk -v r="$ratio" -v m="$MAX_RATIO" 'BEGIN { exit !(r > m) }'; then
	echo "FAIL: ratio ${ratio} > ${MAX_RATIO}" >&2
	exit 1
fi
echo "PASS"
