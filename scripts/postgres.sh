#!/usr/bin/env bash
# postgres.sh: a throwaway PostgreSQL server for svc's tests.
#
#   scripts/postgres.sh start   install the Debian PostgreSQL server if it is
#                               missing, start a private cluster listening on
#                               127.0.0.1 only, create the database svc_test
#                               and print
#                                 SVC_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:PORT/svc_test?sslmode=disable
#                               (also written to $SVC_PG_ENV_FILE if set).
#                               Idempotent: if it is already running, it
#                               only prints the line again.
#   scripts/postgres.sh stop    stop it and remove its directory.
#   scripts/postgres.sh status  exit 0 and print the DSN line if it runs.
#
# Typical use:
#   eval "export $(scripts/postgres.sh start)"
#   go test ./pkg/service/store/...
#   scripts/postgres.sh stop
#
# Environment:
#   PGPORT           port to listen on (default 55432; if the default is taken
#                    by something else, the next free port is used). An
#                    explicit PGPORT that is taken is an error.
#   SVC_PG_DIR       the cluster's directory (default
#                    /tmp/svc-postgres-<uid>-<PGPORT or 55432>).
#   SVC_PG_ENV_FILE  a file to write the SVC_TEST_POSTGRES_DSN=... line to.
#
# The cluster trusts every local connection (tests only: never expose it)
# and keeps PostgreSQL's durable defaults (fsync on), so benchmarks against
# it are honest. As root, the server runs as the postgres user (PostgreSQL
# refuses to run as root); otherwise as the calling user. Needs root or sudo
# only to install the package. Works without a terminal or standard input.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C.UTF-8 LANG=C.UTF-8
unset PGHOST PGHOSTADDR PGUSER PGDATABASE PGPASSWORD PGSERVICE PGOPTIONS

DEFAULT_PORT=55432
DB=svc_test
DIR=${SVC_PG_DIR:-/tmp/svc-postgres-$(id -u)-${PGPORT:-$DEFAULT_PORT}}
DATA=$DIR/data
LOG=$DIR/server.log
PORTFILE=$DIR/port

log() { echo "postgres.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}
# shellcheck source=lib/port.sh
. "$(dirname "$0")/lib/port.sh"

# as_owner runs a command as the cluster's owner.
if [[ $(id -u) == 0 ]]; then
	OWNER=postgres
	as_owner() { runuser -u postgres -- "$@" </dev/null; }
else
	OWNER=$(id -un)
	as_owner() { "$@" </dev/null; }
fi

# bindir prints the newest installed PostgreSQL server's bin directory.
bindir() {
	local d best="" bestv=0 v
	for d in /usr/lib/postgresql/*/bin; do
		[[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]] || continue
		v=${d#/usr/lib/postgresql/}
		v=${v%%/*}
		[[ $v =~ ^[0-9]+$ ]] || continue
		if ((v > bestv)); then
			best=$d
			bestv=$v
		fi
	done
	[[ -n $best ]] && echo "$best"
}

install_server() {
	local sudo=""
	if [[ $(id -u) != 0 ]]; then
		command -v sudo >/dev/null || die "PostgreSQL is not installed and installing it needs root or sudo"
		sudo="sudo -n"
	fi
	log "installing the PostgreSQL server (apt-get install postgresql)"
	local apt=(-o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
	local out
	out=$(mktemp)
	if ! { $sudo apt-get "${apt[@]}" update -qq &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get "${apt[@]}" install -y -qq --no-install-recommends postgresql; } </dev/null >"$out" 2>&1; then
		cat "$out" >&2
		rm -f "$out"
		die "installing PostgreSQL failed"
	fi
	rm -f "$out"
}

dsn() { echo "postgres://postgres@127.0.0.1:$1/$DB?sslmode=disable"; }

emit() {
	local line
	line="SVC_TEST_POSTGRES_DSN=$(dsn "$1")"
	if [[ -n "${SVC_PG_ENV_FILE:-}" ]]; then
		echo "$line" >"$SVC_PG_ENV_FILE"
	fi
	echo "$line"
}

# running reports whether our cluster's server is up and accepting
# connections (a pid file alone is not enough: a killed server's pid can
# linger as a zombie in a container whose init does not reap).
running() {
	local bin
	[[ -f $DATA/postmaster.pid && -f $PORTFILE ]] || return 1
	bin=$(bindir) || return 1
	as_owner "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1 &&
		"$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$PORTFILE")" -t 5 </dev/null
}

psql_admin() {
	"$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d postgres "$@" </dev/null
}

start() {
	if running; then
		PORT=$(cat "$PORTFILE")
		BIN=$(bindir)
		# Recreate the database if a previous run dropped it.
		if [[ -z $(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'") ]]; then
			psql_admin -c "CREATE DATABASE $DB"
		fi
		emit "$PORT"
		return
	fi

	BIN=$(bindir) || {
		install_server
		BIN=$(bindir) || die "no PostgreSQL server under /usr/lib/postgresql/*/bin after installing"
	}
	command -v runuser >/dev/null || [[ $(id -u) != 0 ]] || die "runuser (util-linux) is needed to run PostgreSQL as the postgres user"
	id postgres >/dev/null 2>&1 || [[ $(id -u) != 0 ]] || die "no postgres user (the postgresql-common package creates it)"

	PORT=$(pick_port "${PGPORT:-}" "$DEFAULT_PORT" PGPORT) || exit 1

	# A stale directory (a server killed without stop) is replaced.
	if [[ -e $DIR ]]; then
		if [[ -f $DATA/postmaster.pid ]]; then
			log "replacing the stale cluster in $DIR"
			as_owner "$BIN/pg_ctl" -D "$DATA" stop -m immediate -W >/dev/null 2>&1 || true
		fi
		rm -rf "$DIR"
	fi
	mkdir -p "$DIR"
	chmod 700 "$DIR"
	chown "$OWNER" "$DIR"

	log "initdb in $DATA ($BIN)"
	as_owner "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --no-locale --no-instructions >"$DIR/initdb.log" 2>&1 ||
		{
			cat "$DIR/initdb.log" >&2
			die "initdb failed"
		}
	cat >>"$DATA/postgresql.conf" <<-EOF
		# svc test cluster (scripts/postgres.sh)
		listen_addresses = '127.0.0.1'
		port = $PORT
		unix_socket_directories = '$DIR'
		max_connections = 200
		shared_buffers = 128MB
		logging_collector = off
	EOF
	echo "$PORT" >"$PORTFILE"

	log "starting on 127.0.0.1:$PORT"
	if ! as_owner "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >/dev/null; then
		tail -n 30 "$LOG" >&2 || true
		die "the server did not start"
	fi
	psql_admin -c "CREATE DATABASE $DB"
	emit "$PORT"
}

stop() {
	local bin
	if [[ -f $DATA/postmaster.pid ]] && bin=$(bindir); then
		as_owner "$bin/pg_ctl" -D "$DATA" -w -t 30 stop -m fast >/dev/null 2>&1 ||
			as_owner "$bin/pg_ctl" -D "$DATA" -W stop -m immediate >/dev/null 2>&1 || true
	fi
	rm -rf "$DIR"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status)
	running || exit 1
	PORT=$(cat "$PORTFILE")
	echo "SVC_TEST_POSTGRES_DSN=$(dsn "$PORT")"
	;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
