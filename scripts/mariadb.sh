#!/usr/bin/env bash
# mariadb.sh: a throwaway MariaDB server for the transparency log's tests
# (Tessera's MySQL backend, which several svc serve processes share).
#
#   scripts/mariadb.sh start    install Debian's MariaDB server if it is
#                               missing (without starting the system's
#                               instance), start a private instance
#                               listening on 127.0.0.1 only, create the
#                               database svc_test and print
#                                 SVC_TEST_MARIADB_DSN=root@tcp(127.0.0.1:PORT)/svc_test
#                               (a go-sql-driver/mysql DSN; also written to
#                               $SVC_MARIADB_ENV_FILE if set). Idempotent: if
#                               it is already running, it only prints the
#                               line again.
#   scripts/mariadb.sh stop     stop it and remove its directory.
#   scripts/mariadb.sh status   exit 0 and print the DSN line if it runs.
#
# Typical use:
#   eval "export $(scripts/mariadb.sh start)"
#   go test ./pkg/core/tlog/...
#   scripts/mariadb.sh stop
#
# Environment:
#   MARIADB_PORT          port to listen on (default 53306; if the default is
#                         taken by something else, the next free port is
#                         used). An explicit port that is taken is an error.
#   SVC_MARIADB_DIR       the instance's directory (default
#                         /tmp/svc-mariadb-<uid>-<port>).
#   SVC_MARIADB_ENV_FILE  a file to write the SVC_TEST_MARIADB_DSN=... line to.
#
# The instance trusts root without a password on 127.0.0.1 (tests only:
# never expose it) and keeps InnoDB's durable defaults, so benchmarks
# against it are honest. As root it runs as the mysql user. Needs root or
# sudo only to install the package. Works without a terminal or stdin.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C.UTF-8 LANG=C.UTF-8

DEFAULT_PORT=53306
DB=svc_test
DIR=${SVC_MARIADB_DIR:-/tmp/svc-mariadb-$(id -u)-${MARIADB_PORT:-$DEFAULT_PORT}}
DATA=$DIR/data
SOCK=$DIR/mysqld.sock
PIDFILE=$DIR/mysqld.pid
LOG=$DIR/server.log
PORTFILE=$DIR/port

log() { echo "mariadb.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}
# shellcheck source=lib/port.sh
. "$(dirname "$0")/lib/port.sh"

if [[ $(id -u) == 0 ]]; then
	RUNAS=(--user=mysql)
	OWNER=mysql
else
	RUNAS=()
	OWNER=$(id -un)
fi

have_server() { command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]]; }
mariadbd_bin() { command -v mariadbd || echo /usr/sbin/mariadbd; }

install_server() {
	local sudo=""
	if [[ $(id -u) != 0 ]]; then
		command -v sudo >/dev/null || die "MariaDB is not installed and installing it needs root or sudo"
		sudo="sudo -n"
	fi
	log "installing the MariaDB server (apt-get install mariadb-server), without starting the system's instance"
	local apt=(-o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
	local out policy=/usr/sbin/policy-rc.d made_policy=""
	out=$(mktemp)
	# policy-rc.d exit 101: Debian's maintainer scripts start no service.
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
		$sudo chmod 755 "$policy"
		made_policy=1
	fi
	local ok=1
	{ $sudo apt-get "${apt[@]}" update -qq &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get "${apt[@]}" install -y -qq --no-install-recommends mariadb-server mariadb-client; } </dev/null >"$out" 2>&1 || ok=""
	[[ -n $made_policy ]] && $sudo rm -f "$policy"
	if [[ -z $ok ]]; then
		cat "$out" >&2
		rm -f "$out"
		die "installing MariaDB failed"
	fi
	rm -f "$out"
}

dsn() { echo "root@tcp(127.0.0.1:$1)/$DB"; }

emit() {
	local line
	line="SVC_TEST_MARIADB_DSN=$(dsn "$1")"
	if [[ -n "${SVC_MARIADB_ENV_FILE:-}" ]]; then
		echo "$line" >"$SVC_MARIADB_ENV_FILE"
	fi
	echo "$line"
}

client() { mariadb --no-defaults -h 127.0.0.1 -P "$PORT" -u root "$@" </dev/null; }

running() {
	[[ -f $PIDFILE && -f $PORTFILE ]] || return 1
	kill -0 "$(cat "$PIDFILE")" 2>/dev/null || return 1
	PORT=$(cat "$PORTFILE")
	client -e 'SELECT 1' >/dev/null 2>&1
}

start() {
	if running; then
		client -e "CREATE DATABASE IF NOT EXISTS $DB"
		emit "$PORT"
		return
	fi
	have_server || install_server
	have_server || die "no mariadbd after installing"
	command -v mariadb-install-db >/dev/null || die "no mariadb-install-db (package mariadb-server)"

	PORT=$(pick_port "${MARIADB_PORT:-}" "$DEFAULT_PORT" MARIADB_PORT) || exit 1

	# A stale directory (a server killed without stop) is replaced.
	if [[ -e $DIR ]]; then
		if [[ -f $PIDFILE ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
			log "stopping the stale instance in $DIR"
			kill "$(cat "$PIDFILE")" 2>/dev/null || true
			sleep 1
		fi
		rm -rf "$DIR"
	fi
	mkdir -p "$DIR"
	chmod 700 "$DIR"
	chown "$OWNER" "$DIR"

	log "mariadb-install-db in $DATA"
	mariadb-install-db --no-defaults "${RUNAS[@]}" --datadir="$DATA" --auth-root-authentication-method=normal \
		--skip-test-db >"$DIR/install.log" 2>&1 || {
		cat "$DIR/install.log" >&2
		die "mariadb-install-db failed"
	}
	echo "$PORT" >"$PORTFILE"
	log "starting on 127.0.0.1:$PORT"
	"$(mariadbd_bin)" --no-defaults "${RUNAS[@]}" --datadir="$DATA" --port="$PORT" --bind-address=127.0.0.1 \
		--socket="$SOCK" --pid-file="$PIDFILE" --skip-name-resolve --max-connections=200 \
		--log-error="$LOG" </dev/null >/dev/null 2>&1 &
	for _ in $(seq 1 600); do
		if [[ -f $PIDFILE ]] && client -e 'SELECT 1' >/dev/null 2>&1; then
			client -e "CREATE DATABASE IF NOT EXISTS $DB"
			emit "$PORT"
			return
		fi
		sleep 0.1
	done
	tail -n 30 "$LOG" >&2 || true
	die "the server did not start"
}

stop() {
	if [[ -f $PIDFILE ]]; then
		local pid
		pid=$(cat "$PIDFILE")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -rf "$DIR"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status)
	running || exit 1
	echo "SVC_TEST_MARIADB_DSN=$(dsn "$PORT")"
	;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
