#!/usr/bin/env bash
# bench-verify.sh: build svc-verify exactly as the release does (CGO_ENABLED=0,
# -trimpath, goreleaser's ldflags from .goreleaser.yaml) and time the whole
# process, start to exit, in one run against baselines:
#   - `svc-verify verify` of a 10,000-record VPEC vs `jq empty` on the same file
#   - `svc-verify version` (start-up alone) and a 4-record VPEC
# Uses hyperfine when installed, else a loop (median of RUNS).
#   N=10000  RUNS=30  SVC_VERIFY=path (time a given binary instead of building)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
N=${N:-10000}
RUNS=${RUNS:-30}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin=${SVC_VERIFY:-}
if [ -z "$bin" ]; then
	bin="$work/svc-verify"
	pkg=github.com/svc-gov/svc/pkg/app/cli/clicore
	CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w -X $pkg.version=bench -X $pkg.commit=$(git rev-parse --short HEAD) -X $pkg.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		-o "$bin" ./cmd/svc-verify
fi
go run ./internal/loadgen/largevpec -dir "$work" -n "$N" >/dev/null
mkdir -p "$work/small"
go run ./internal/loadgen/largevpec -dir "$work/small" -n 4 >/dev/null
vpec=$work/vpec.json
bundle=$work/trust-bundle.pem

echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); $(nproc) cores; $(go version | cut -d' ' -f3)"
echo "binary: $(ls -l "$bin" | awk '{print $5}') bytes; VPEC: $N records, $(wc -c <"$vpec") bytes"

cmds=(
	"jq empty $vpec"
	"$bin verify $vpec --trust-root $bundle --output json"
	"$bin version"
	"$bin verify $work/small/vpec.json --trust-root $work/small/trust-bundle.pem --output json"
)
names=("jq-empty" "verify-${N}" "version" "verify-4")

if command -v hyperfine >/dev/null; then
	hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$work/h.json" "${cmds[@]}" >/dev/null
	mapfile -t med < <(jq -r '.results[].median * 1000' "$work/h.json")
else
	med=()
	for c in "${cmds[@]}"; do
		# shellcheck disable=SC2086
		for _ in 1 2 3; do $c >/dev/null || true; done
		ts=()
		for _ in $(seq "$RUNS"); do
			s=$(date +%s%N)
			# shellcheck disable=SC2086
			$c >/dev/null || true
			e=$(date +%s%N)
			ts+=($(((e - s) / 1000)))
		done
		med+=("$(printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}')")
	done
fi
jq_ms=${med[0]}
for i in "${!names[@]}"; do
	printf '%-12s median %8.2f ms  %5.2fx jq-empty\n' "${names[$i]}" "${med[$i]}" "$(echo "${med[$i]} / $jq_ms" | bc -l)"
done
