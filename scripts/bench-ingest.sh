#!/usr/bin/env bash
# bench-ingest.sh: start `svc serve` on loopback (SQLite, or PostgreSQL with
# BACKEND=postgres), make a key, measure record ingest and the close of a
# 10,000-record run with internal/loadgen/ingestbench, then stop the server.
# With BATCH=N (default 100; 0 to skip) it also measures the batch API:
# BATCH_RECORDS records per run sent in batches of N.
# With WHOLE_RUNS=N (default 16; 0 to skip) it then measures whole runs: N
# clients each opening a run, recording 6 records and closing it, for
# WHOLE_RUNS_FOR, against SERVERS server processes on the same database
# (default 1 on SQLite, 2 on PostgreSQL; clients alternate between them)
# with the transparency log off (--no-tlog), after one server with the log on
# (svc serve's default; one process writes a POSIX log).
# RECORDS=0 skips single-record ingest.
#   BACKEND=sqlite|postgres  RUNS=32  RECORDS=500  CLOSE_RECORDS=10000  BATCH=100  BATCH_RECORDS=5000
#   WHOLE_RUNS=16  WHOLE_RUNS_FOR=10s  SERVERS=1|2
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
BACKEND=${BACKEND:-sqlite}
RUNS=${RUNS:-32}
RECORDS=${RECORDS:-500}
CLOSE_RECORDS=${CLOSE_RECORDS:-10000}
BATCH=${BATCH:-100}
BATCH_RECORDS=${BATCH_RECORDS:-5000}
WHOLE_RUNS=${WHOLE_RUNS:-16}
WHOLE_RUNS_FOR=${WHOLE_RUNS_FOR:-10s}
if [ "$BACKEND" = postgres ]; then SERVERS=${SERVERS:-2}; else SERVERS=${SERVERS:-1}; fi

work=$(mktemp -d)
server_pids=()
stop_servers() {
	for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
	server_pids=()
	return 0
}
cleanup() {
	stop_servers
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
# start_servers N [serve flags...]: start N svc serve processes on the same
# data directory and database; their base URLs, comma-separated, go to $urls.
start_servers() {
	local n=$1 i
	shift
	urls=""
	for i in $(seq "$n"); do
		rm -f "$work/addr$i"
		"$work/svc" serve --data-dir "$work/data" "${db[@]}" --addr 127.0.0.1:0 --addr-file "$work/addr$i" "$@" 2>>"$work/serve$i.log" >/dev/null &
		server_pids+=($!)
		for _ in $(seq 100); do [ -s "$work/addr$i" ] && break; sleep 0.1; done
		urls="${urls:+$urls,}http://$(cat "$work/addr$i")"
	done
}
start_servers 1
echo "backend: $BACKEND; server at ${urls#http://}; $(nproc) cores; $(uptime | sed 's/.*load/load/')"
"$work/ingestbench" -url "$urls" -key "$key" -runs "$RUNS" -records "$RECORDS" -close-records "$CLOSE_RECORDS" -batch "$BATCH" -batch-records "$BATCH_RECORDS"
if [ "$WHOLE_RUNS" -gt 0 ]; then
	for tlog in on off; do
		stop_servers
		# One process writes a POSIX transparency log (docs/TRANSPARENCY.md):
		# with the log on, one server; with it off, SERVERS.
		flags=(--no-tlog)
		n=$SERVERS
		[ "$tlog" = on ] && flags=() && n=1
		start_servers "$n" "${flags[@]}"
		echo "whole runs, transparency log $tlog: $n server process(es) at ${urls//http:\/\//}; $(uptime | sed 's/.*load/load/')"
		"$work/ingestbench" -url "$urls" -key "$key" -runs "$WHOLE_RUNS" -records 0 -close-records 0 -whole-runs "$WHOLE_RUNS" -whole-runs-for "$WHOLE_RUNS_FOR"
	done
fi
