#!/usr/bin/env bash
# bench-ingest.sh: start `svc serve` on loopback (SQLite, or PostgreSQL with
# BACKEND=postgres), make a key, measure record ingest and the close of a
# 10,000-record run with internal/loadgen/ingestbench, then stop the server.
# With BATCH=N (default 100; 0 to skip) it also measures the batch API:
# BATCH_RECORDS records per run sent in batches of N.
#   BACKEND=sqlite|postgres  RUNS=32  RECORDS=500  CLOSE_RECORDS=10000  BATCH=100  BATCH_RECORDS=5000
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
BACKEND=${BACKEND:-sqlite}
RUNS=${RUNS:-32}
RECORDS=${RECORDS:-500}
CLOSE_RECORDS=${CLOSE_RECORDS:-10000}
BATCH=${BATCH:-100}
BATCH_RECORDS=${BATCH_RECORDS:-5000}

work=$(mktemp -d)
server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	[ "$BACKEND" = postgres ] && scripts/postgres.sh stop >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/svc" ./cmd/svc
go build -o "$work/ingestbench" ./internal/loadgen/ingestbench
db=()
if [ "$BACKEND" = postgres ]; then
	dsn=$(scripts/postgres.sh start | sed -n 's/^SVC_TEST_POSTGRES_DSN=//p')
	db=(--database "$dsn")
fi
"$work/svc" admin org create bench --data-dir "$work/data" "${db[@]}" >/dev/null
key=$("$work/svc" admin key create --org bench --live --data-dir "$work/data" "${db[@]}" 2>/dev/null)
"$work/svc" serve --data-dir "$work/data" "${db[@]}" --addr 127.0.0.1:0 --addr-file "$work/addr" 2>"$work/serve.log" >/dev/null &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
echo "backend: $BACKEND; server at $(cat "$work/addr"); $(nproc) cores"
"$work/ingestbench" -url "http://$(cat "$work/addr")" -key "$key" -runs "$RUNS" -records "$RECORDS" -close-records "$CLOSE_RECORDS" -batch "$BATCH" -batch-records "$BATCH_RECORDS"
