#!/usr/bin/env bash
# bench-zk.sh: Groth16 proofs of MLP heads (pkg/zk/head) on this machine:
# constraints, compile, setup, prove and verify time, proof and key sizes,
# and the peak RSS of each phase, each phase in its own process under
# /usr/bin/time -v. Same-run baselines: the plain int8 run of the head
# (for prove) and one Ed25519 verification (for verify).
# prove_cpu_s is CPU time (user + system, all threads) per proof: steadier
# than wall time when other work shares the cores.
# Usage: scripts/bench-zk.sh [dims...]   (default: 768,64,2 768,256,2 768,320,32,2)
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/zkbench" ./internal/zkbench
grep -m1 'model name' /proc/cpuinfo
echo "cores: $(nproc), GOMAXPROCS=${GOMAXPROCS:-default}, $(go version)"
dims_list=("$@")
[ ${#dims_list[@]} -gt 0 ] || dims_list=(768,64,2 768,256,2 768,320,32,2)
phase() { # phase name dir args...: prints the JSON line and the peak RSS
	local name=$1 dir=$2; shift 2
	/usr/bin/time -v "$work/zkbench" "$name" -dir "$dir" "$@" >"$work/out" 2>"$work/time"
	cat "$work/out"
	echo "  $name peak RSS: $(awk -F': ' '/Maximum resident set size/ {printf "%.1f MB", $2/1024}' "$work/time")"
}
for dims in "${dims_list[@]}"; do
	echo "== head $dims"
	d="$work/$dims"
	phase setup "$d" -dims "$dims"
	phase prove "$d" -n "${PROVE_N:-7}"
	phase verify "$d" -n "${VERIFY_N:-300}"
done
