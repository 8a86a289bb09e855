#!/usr/bin/env bash
# bench-verify.sh: build svc-verify exactly as the release does (CGO_ENABLED=0,
# -trimpath, goreleaser's ldflags from .goreleaser.yaml) and time the whole
# process, start to exit, in one run against baselines:
#   - `svc-verify verify` of a 10,000-record VPEC vs `jq empty` on the same file
#   - `svc-verify version` (start-up alone) and a 4-record VPEC
# Rounds interleave the commands; medians of RUNS rounds, wall and CPU time.
#   N=10000  RUNS=30  SVC_VERIFY=path (time a given binary instead of building)
#   BASELINE=path (also time that svc-verify, e.g. one built from main)
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
if [ -n "${BASELINE:-}" ]; then
	cmds+=("$BASELINE verify $vpec --trust-root $bundle --output json" "$BASELINE version")
	names+=("base-verify" "base-version")
fi

# One round runs every command once, so that the machine's load drifts
# over all of them alike; the figures are medians over RUNS rounds. Wall
# time is start to exit; CPU time (user+sys, from perf stat when
# installed) is less sensitive to other processes on a shared machine.
for _ in 1 2 3; do for c in "${cmds[@]}"; do $c >/dev/null 2>&1 || true; done; done
# run_one runs a command once; it prints its wall and CPU milliseconds
# (perf stat's duration_time and task-clock when perf is installed, so that
# perf's own start-up is not counted; else wall from date and CPU -1).
run_one() {
	if command -v perf >/dev/null; then
		perf stat -x, -e task-clock,duration_time -o "$work/p" "$@" >/dev/null 2>&1 || true
		awk -F, '/task-clock/ {c=$1} /duration_time/ {w=$1/1e6} END {print w, c}' "$work/p"
	else
		local s e
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s%N)
		echo "$(((e - s) / 1000000)) -1"
	fi
}
for i in "${!cmds[@]}"; do : >"$work/wall.$i"; : >"$work/cpu.$i"; done
for _ in $(seq "$RUNS"); do
	for i in "${!cmds[@]}"; do
		# shellcheck disable=SC2086
		read -r w c < <(run_one ${cmds[$i]})
		echo "$w" >>"$work/wall.$i"
		echo "$c" >>"$work/cpu.$i"
	done
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
jq_wall=$(median "$work/wall.0")
jq_cpu=$(median "$work/cpu.0")
for i in "${!names[@]}"; do
	w=$(median "$work/wall.$i")
	c=$(median "$work/cpu.$i")
	printf '%-12s wall %8.2f ms (%5.2fx jq)   cpu %8.2f ms (%5.2fx jq)\n' "${names[$i]}" \
		"$w" "$(echo "$w / $jq_wall" | bc -l)" "$c" "$(echo "$c / $jq_cpu" | bc -l)"
done
