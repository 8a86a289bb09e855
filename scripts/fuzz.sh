#!/usr/bin/env bash
# fuzz.sh: run every fuzz target for FUZZTIME each (default 20000x: a count
# of executions, not a duration: Go 1.26's coordinator can report a spurious
# "context deadline exceeded" when a duration runs out under CPU contention,
# go.dev/issue/75804). Each target reads untrusted input; a failure leaves
# its input under the package's testdata/fuzz, as go test -fuzz does.
#
# Each package's test binary is built once, with coverage instrumentation
# (-d=libfuzzer, what go test -fuzz adds) on svc's own packages, the
# standard library's encoders and the RFC 3161 parsers svc reads tokens
# with, and its targets run from it. go test -fuzz instruments every
# package linked in (gnark, protobuf, the SQL drivers ...) and relinks per
# target: the coordinator then compares that whole coverage map after each
# execution, which made a one-line validator in pkg/service/server run 500
# to 1,500 executions a second instead of about 8,000 (docs/BENCHMARKS.md,
# "Test suite").
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
FUZZTIME=${FUZZTIME:-20000x}
# Property targets whose every execution does a whole issuance or proof
# check (FuzzIssueGaps signs, time-stamps and verifies a VPEC of up to 64
# records; FuzzVerifyCircuits verifies Groth16 proofs: 3 to 4 ms each, 60
# to 75 s at FUZZTIME) run HEAVY_FUZZTIME executions; parsers run FUZZTIME.
HEAVY_FUZZTIME=${HEAVY_FUZZTIME:-5000x}
heavy=" FuzzIssueGaps FuzzVerifyCircuits "
instrument=(github.com/svc-gov/svc/... encoding/... github.com/digitorus/...)
gcflags=()
for p in "${instrument[@]}"; do gcflags+=("-gcflags=$p=-d=libfuzzer"); done
cache=$(go env GOCACHE)/fuzz
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
n=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
	[ -n "$targets" ] || continue
	go test -c "${gcflags[@]}" -o "$bin/fuzz.test" "$pkg"
	for target in $targets; do
		budget=$FUZZTIME
		[[ $heavy == *" $target "* ]] && budget=$HEAVY_FUZZTIME
		echo "fuzz: $pkg $target ($budget)"
		(cd "$dir" && "$bin/fuzz.test" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$budget" \
			-test.fuzzcachedir "$cache/$pkg" -test.timeout 10m -test.paniconexit0) >"$bin/log" 2>&1 || { cat "$bin/log"; exit 1; }
		n=$((n + 1))
	done
done
echo "fuzz: $n targets ran for $FUZZTIME each ($HEAVY_FUZZTIME:$heavy) without a failure"
