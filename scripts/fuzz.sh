#!/usr/bin/env bash
# fuzz.sh: run every fuzz target for FUZZTIME each (default 20000x: a count
# of executions, not a duration: Go 1.26's coordinator can report a spurious
# "context deadline exceeded" when a duration runs out under CPU contention,
# go.dev/issue/75804). Each target reads untrusted input; a failure leaves
# its input under testdata/fuzz.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
FUZZTIME=${FUZZTIME:-20000x}
n=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "fuzz: $pkg $target ($FUZZTIME)"
		go test -timeout 10m "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" >/tmp/svc-fuzz.log 2>&1 || { cat /tmp/svc-fuzz.log; exit 1; }
		n=$((n + 1))
	done
done
echo "fuzz: $n targets ran for $FUZZTIME each without a failure"
