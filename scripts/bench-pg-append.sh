#!/usr/bin/env bash
# bench-pg-append.sh: what PostgreSQL alone can do for svc's record append,
# with no svc in the loop. It starts a PostgreSQL server on loopback
# (scripts/postgres.sh), creates the runs and records tables as svc's
# migrations do, and drives them with pgbench (CLIENTS clients, SECONDS
# each) in one run:
#   select   SELECT 1                                       (protocol only)
#   insert   one INSERT into records, committed              (no run lock)
#   append   svc's one-statement append (appendFastSQL's shape: count the
#            record in the run, insert it), committed
#   append8  eight appends to one run in one transaction     (group commit)
#   wholerun the writes and reads of a whole run as svc serve commits them
#            (open, six appends, seal, read the records, store the VPEC:
#            nine commits), from WHOLE_CLIENTS clients
# Each line is committed transactions/s and appends/s (wholerun: runs/s),
# and the machine's busy CPU time (all processes: PostgreSQL and pgbench,
# from /proc/stat) per transaction.
# pgbench sends prepared statements (MODE=prepared), as svc's driver does
# (pgx caches each statement's plan); MODE=simple parses and plans each.
#   CLIENTS=32  WHOLE_CLIENTS=16  SECONDS_EACH=10  MODE=prepared|simple
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-32}
WHOLE_CLIENTS=${WHOLE_CLIENTS:-16}
MODE=${MODE:-prepared}
SECONDS_EACH=${SECONDS_EACH:-10}
work=$(mktemp -d)
cleanup() {
	scripts/postgres.sh stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

dsn=$(scripts/postgres.sh start | sed -n 's/^SVC_TEST_POSTGRES_DSN=//p')
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGOPTIONS='-c client_min_messages=warning' "$bin/psql" -q "$dsn" <<'EOF'
DROP TABLE IF EXISTS vpecs, records, runs;
CREATE TABLE runs (id text PRIMARY KEY, org_id text NOT NULL, sealed boolean NOT NULL DEFAULT false,
	record_count bigint NOT NULL DEFAULT 0, record_bytes bigint NOT NULL DEFAULT 0,
	last_sequence bigint NOT NULL DEFAULT 0, last_chain_hash text NOT NULL DEFAULT '',
	closed_at timestamptz, vpec_id text);
CREATE TABLE records (run_id text NOT NULL REFERENCES runs (id), sequence bigint NOT NULL, record_id text NOT NULL,
	chain_hash text NOT NULL, body bytea NOT NULL, PRIMARY KEY (run_id, sequence), UNIQUE (run_id, record_id));
CREATE TABLE vpecs (id text PRIMARY KEY, run_id text NOT NULL UNIQUE REFERENCES runs (id), org_id text NOT NULL,
	issued_at timestamptz NOT NULL, body bytea NOT NULL);
INSERT INTO runs (id, org_id) SELECT 'run_' || g, 'org' FROM generate_series(1, 64) g;
EOF

# append_sql RUN SEQ: the append of sequence SEQ to run RUN (SQL
# expressions), one statement of appendFastSQL's shape (pkg/service/store/
# postgres): count the record in the open run, insert it for the run it
# updated. Variables are cast (pgbench -M prepared sends them as
# parameters), and no literal holds a colon (pgbench would read one as a
# variable): chr(58) is ':'.
append_sql() {
	cat <<EOF
WITH u AS (UPDATE runs SET record_count = record_count + 1, record_bytes = record_bytes + 600,
	last_sequence = CASE WHEN CAST($2 AS bigint) > last_sequence THEN CAST($2 AS bigint) ELSE last_sequence END
	WHERE id = $1 AND org_id = 'org' AND NOT sealed RETURNING id)
INSERT INTO records (run_id, sequence, record_id, chain_hash, body)
	SELECT id, CAST($2 AS bigint), 'rec_' || CAST($2 AS text), 'sha256' || chr(58) || '$(printf 'a%.0s' $(seq 64))', convert_to(repeat('x', 600), 'UTF8') FROM u;
EOF
}
echo 'SELECT 1;' >"$work/select.sql"
cat >"$work/insert.sql" <<EOF
\set s random(1, 1000000000000)
INSERT INTO records (run_id, sequence, record_id, chain_hash, body)
VALUES ('run_1', CAST(:s AS bigint), 'rec_' || CAST(:s AS text), 'sha256' || chr(58) || 'x', convert_to(repeat('x', 600), 'UTF8')) ON CONFLICT DO NOTHING;
EOF
{
	echo '\set r random(1, 64)'
	echo '\set s random(1, 1000000000000)'
	append_sql "'run_' || CAST(:r AS text)" :s
} >"$work/append.sql"
{
	echo '\set r random(1, 64)'
	echo 'BEGIN;'
	for i in $(seq 8); do
		echo "\\set s$i random(1, 1000000000000)"
		append_sql "'run_' || CAST(:r AS text)" ":s$i"
	done
	echo 'COMMIT;'
} >"$work/append8.sql"
{
	echo '\set w random(1, 1000000000000)'
	echo "INSERT INTO runs (id, org_id) VALUES ('wr_' || CAST(:w AS text), 'org');"
	for i in $(seq 6); do
		append_sql "'wr_' || CAST(:w AS text)" "$i"
	done
	echo "UPDATE runs SET sealed = true, closed_at = now() WHERE id = 'wr_' || CAST(:w AS text) AND NOT sealed;"
	echo "SELECT sequence, body FROM records WHERE run_id = 'wr_' || CAST(:w AS text) ORDER BY sequence;"
	echo 'BEGIN;'
	echo "INSERT INTO vpecs (id, run_id, org_id, issued_at, body) VALUES ('vpec_' || CAST(:w AS text), 'wr_' || CAST(:w AS text), 'org', now(), convert_to(repeat('v', 7000), 'UTF8'));"
	echo "UPDATE runs SET vpec_id = 'vpec_' || CAST(:w AS text) WHERE id = 'wr_' || CAST(:w AS text);"
	echo 'COMMIT;'
} >"$work/wholerun.sql"

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) cores; $("$bin/postgres" --version); $(uptime | sed 's/.*load/load/')"
# busy_ticks: the machine's busy CPU time so far, in clock ticks.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
hz=$(getconf CLK_TCK)
for s in select insert append append8 wholerun; do
	c=$CLIENTS
	[ "$s" = wholerun ] && c=$WHOLE_CLIENTS
	b0=$(busy_ticks)
	tps=$("$bin/pgbench" -n -M "$MODE" -c "$c" -j 2 -T "$SECONDS_EACH" -f "$work/$s.sql" "$dsn" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	b1=$(busy_ticks)
	cpu=$(awk -v b="$((b1 - b0))" -v hz="$hz" -v t="$tps" -v d="$SECONDS_EACH" 'BEGIN { printf "%.3f", b / hz / (t * d) * 1000 }')
	if [ "$s" = wholerun ]; then
		echo "wholerun $(printf '%9.0f' "$tps") runs/s (9 commits each, $c clients), $cpu ms CPU a run"
		continue
	fi
	per=1
	[ "$s" = append8 ] && per=8
	[ "$s" = select ] && per=0
	awk -v s="$s" -v t="$tps" -v p="$per" -v cpu="$cpu" 'BEGIN { printf "%-8s %9.0f transactions/s", s, t; if (p) printf " %9.0f appends/s", t * p; printf ", %s ms CPU a transaction\n", cpu }'
done
