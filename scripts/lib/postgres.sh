# shellcheck shell=bash
# scripts/lib/postgres.sh: find a PostgreSQL server agentcard may create
# databases on, starting a private one when there is none. Sourced by
# scripts/run.sh, scripts/test.sh, scripts/bench-load.sh and
# scripts/bench-edge.sh (which set `set -euo pipefail` themselves); the
# functions report errors with a non-zero status and a message on stderr,
# so they behave the same under `set -e` or not. Packages are installed
# with scripts/lib/apt.sh.
#
# Functions:
#   agentcard_find_postgres        sets AGENTCARD_PG_URL (and the variables below)
#   agentcard_database_url NAME    prints the URL of database NAME on that server
#   agentcard_ensure_database NAME creates database NAME there if it is missing
#   agentcard_stop_private_postgres  stops the private cluster (if this lib started one)
#   agentcard_pg_server_bindir     prints the folder of PostgreSQL's server binaries (initdb,
#                                  pg_ctl), installing Debian's `postgresql` when there are none
#
# agentcard_find_postgres tries, in order:
#   1. $DATABASE_URL, when set: the server must answer, else this fails saying
#      why (an explicit choice is never replaced by another server).
#      AGENTCARD_PG_URL is then the same server's `postgres` database (or
#      DATABASE_URL itself when that one is not reachable); run.sh keeps
#      DATABASE_URL as the app database.
#   2. The server on 127.0.0.1:5432, user postgres, trust auth.
#   3. A private cluster in <repo>/.pgdata (data/, run/, log), on
#      127.0.0.1:54329, using the binaries from /usr/lib/postgresql/<highest>/bin
#      (or initdb/pg_ctl on PATH); Debian's `postgresql` package is installed
#      with apt-get when there are none (as root, or with passwordless sudo:
#      see scripts/lib/apt.sh).
#      As root the cluster belongs to the `postgres` system user (created
#      with useradd if missing) and initdb/pg_ctl run through runuser; if that
#      user cannot reach the repo (e.g. a checkout under /root), the cluster
#      goes to /var/tmp/agentcard-pgdata-<checksum of the repo path> instead.
# psql itself is installed (package postgresql-client) the same way if absent.
#
# It sets:
#   AGENTCARD_PG_URL      libpq URL of the maintenance database, e.g.
#                         postgres://postgres@127.0.0.1:5432/postgres
#   AGENTCARD_PG_SOURCE   database_url | local | private
#   AGENTCARD_PG_STARTED  1 when this call started the private cluster, else 0
#   AGENTCARD_PG_DIR      the private cluster's folder (source private only)
#
# Environment knobs:
#   DATABASE_URL                see step 1.
#   AGENTCARD_PG_SKIP_LOCAL=1   skip step 2, as if nothing answered on 5432
#                               (to test the private-cluster path on a machine
#                               that has a server there).
#   AGENTCARD_PG_PORT           port of the private cluster (default 54329).

AGENTCARD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# shellcheck source=scripts/lib/apt.sh
source "$AGENTCARD_ROOT/scripts/lib/apt.sh"
AGENTCARD_PG_URL=${AGENTCARD_PG_URL:-}
AGENTCARD_PG_SOURCE=${AGENTCARD_PG_SOURCE:-}
AGENTCARD_PG_STARTED=${AGENTCARD_PG_STARTED:-0}
AGENTCARD_PG_DIR=${AGENTCARD_PG_DIR:-}
_AGENTCARD_PG_BINDIR=

_agentcard_log() {
	printf 'agentcard: %s\n' "$*" >&2
}

_agentcard_die() {
	printf 'agentcard: error: %s\n' "$*" >&2
	return 1
}

# URL or conninfo string with any password replaced by ***, for messages.
_agentcard_mask() {
	printf '%s\n' "$1" | sed -E \
		-e 's#^(postgres(ql)?://[^:/@?]*):[^@/?]*@#\1:***@#' \
		-e 's#(password=)[^ &]*#\1***#g'
}

# Percent-encode a path segment (database name) for a libpq URL.
_agentcard_urlencode() {
	local LC_ALL=C s=$1 out="" c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	printf '%s\n' "$out"
}

# _agentcard_url_with_db URL NAME: URL with its database (path) replaced by
# NAME, query string kept. A key=value conninfo string gets dbname=NAME
# appended (libpq takes the last one).
_agentcard_url_with_db() {
	local url=$1 name=$2 scheme rest query=""
	case $url in
	postgres://* | postgresql://*) ;;
	*)
		printf "%s dbname='%s'\n" "$url" "$(printf '%s' "$name" | sed -e "s/[\\\\']/\\\\&/g")"
		return 0
		;;
	esac
	scheme=${url%%://*}
	rest=${url#*://}
	if [[ $rest == *\?* ]]; then
		query="?${rest#*\?}"
		rest=${rest%%\?*}
	fi
	printf '%s://%s/%s%s\n' "$scheme" "${rest%%/*}" "$(_agentcard_urlencode "$name")" "$query"
}

# _agentcard_probe URL: succeeds when the server answers `select 1`; on
# failure prints psql's first error line on stdout.
_agentcard_probe() {
	local err
	if err=$(PGCONNECT_TIMEOUT=3 psql -X -w -Atq -d "$1" -c 'select 1' 2>&1 >/dev/null); then
		return 0
	fi
	printf '%s\n' "${err%%$'\n'*}"
	return 1
}

# psql on a URL, stopping at the first error, never prompting for a password.
_agentcard_psql() {
	local url=$1
	shift
	PGCONNECT_TIMEOUT=${PGCONNECT_TIMEOUT:-10} psql -X -w -q -v ON_ERROR_STOP=1 -d "$url" "$@"
}

# _agentcard_pg_install PKG...: agentcard_apt_install, saying what else to do
# when it cannot.
_agentcard_pg_install() {
	agentcard_apt_install "$@" && return 0
	_agentcard_die "PostgreSQL is needed (package(s) $*): install it," \
		"or set DATABASE_URL to a PostgreSQL server where this user may create databases."
}

# Highest /usr/lib/postgresql/<version>/bin that has a server (or the one of
# version $1 when given), else the directory of initdb+pg_ctl on PATH.
_agentcard_pg_bindir() {
	local want=${1:-} d best="" initdb
	local -a dirs=()
	for d in /usr/lib/postgresql/*/bin; do
		[[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]] && dirs+=("$d")
	done
	if ((${#dirs[@]})); then
		if [[ -n $want ]]; then
			for d in "${dirs[@]}"; do
				[[ $d == "/usr/lib/postgresql/$want/bin" ]] && best=$d
			done
		else
			best=$(printf '%s\n' "${dirs[@]}" | sort -V | tail -n 1)
		fi
	fi
	if [[ -z $best ]] && command -v pg_ctl >/dev/null 2>&1 && initdb=$(command -v initdb); then
		d=$(dirname "$initdb")
		if [[ -z $want ]] || [[ $("$d/pg_ctl" --version 2>/dev/null) =~ \)\ ${want}[.\ ] ]]; then
			best=$d
		fi
	fi
	[[ -n $best ]] || return 1
	printf '%s\n' "$best"
}

_agentcard_ensure_psql() {
	local d
	command -v psql >/dev/null 2>&1 && return 0
	d=$(printf '%s\n' /usr/lib/postgresql/*/bin/psql | sort -V | tail -n 1)
	if [[ -x $d ]]; then
		PATH="$(dirname "$d"):$PATH"
		return 0
	fi
	_agentcard_pg_install postgresql-client || return 1
	if ! command -v psql >/dev/null 2>&1; then
		_agentcard_die "psql is still missing after installing postgresql-client"
		return 1
	fi
}

_agentcard_try_local() {
	local url=postgres://postgres@127.0.0.1:5432/postgres
	[[ ${AGENTCARD_PG_SKIP_LOCAL:-} == 1 ]] && return 1
	_agentcard_probe "$url" >/dev/null || return 1
	AGENTCARD_PG_URL=$url
	AGENTCARD_PG_SOURCE=local
	_agentcard_log "using the PostgreSQL server on 127.0.0.1:5432 (user postgres)"
}

# Where the private cluster lives: <repo>/.pgdata. Echoes the folder.
_agentcard_private_dir() {
	local pgdir=$AGENTCARD_ROOT/.pgdata
	if ! mkdir -p "$pgdir/run"; then
		_agentcard_die "cannot create $pgdir"
		return 1
	fi
	if [[ $EUID -eq 0 ]]; then
		chown postgres: "$pgdir" "$pgdir/run" || return 1
		if ! runuser -u postgres -- test -w "$pgdir" 2>/dev/null; then
			# The repo sits where the postgres user cannot reach (e.g. under
			# /root): keep the cluster in /var/tmp instead, one per checkout.
			rmdir "$pgdir/run" "$pgdir" 2>/dev/null || true
			pgdir=/var/tmp/agentcard-pgdata-$(printf '%s' "$AGENTCARD_ROOT" | cksum | cut -d ' ' -f 1)
			_agentcard_log "the postgres user cannot reach $AGENTCARD_ROOT; keeping the private cluster in $pgdir"
			mkdir -p "$pgdir/run" || return 1
			chown postgres: "$pgdir" "$pgdir/run" || return 1
		fi
	fi
	printf '%s\n' "$pgdir"
}

# _agentcard_private_start BINDIR PGDIR PORT LOCKFD (runs under the lock)
_agentcard_private_start() {
	local bindir=$1 pgdir=$2 port=$3 lockfd=$4
	local data=$pgdir/data run=$pgdir/run log=$pgdir/log locale=C sockopt locales
	local -a as_owner=()
	[[ $EUID -eq 0 ]] && as_owner=(runuser -u postgres --)

	if [[ ! -s $data/PG_VERSION ]]; then
		if [[ -d $data ]] && [[ -n $(ls -A "$data") ]]; then
			_agentcard_die "$data exists but holds no PostgreSQL cluster; remove it and try again"
			return 1
		fi
		locales=$(locale -a 2>/dev/null || true)
		grep -qixE 'c\.utf-?8' <<<"$locales" && locale=C.UTF-8
		_agentcard_log "creating a private PostgreSQL cluster in $data ($bindir)"
		if ! (cd "$pgdir" && "${as_owner[@]}" "$bindir/initdb" -U postgres --auth=trust \
			--encoding=UTF8 --locale="$locale" -D "$data") >"$pgdir/initdb.log" 2>&1; then
			cat "$pgdir/initdb.log" >&2
			_agentcard_die "initdb failed (see above)"
			return 1
		fi
	fi

	if (cd "$pgdir" && "${as_owner[@]}" "$bindir/pg_ctl" -D "$data" status) >/dev/null 2>&1; then
		_agentcard_log "using the private PostgreSQL cluster in $data on 127.0.0.1:$port"
		return 0
	fi

	# A Unix socket path is limited to 107 bytes: go without one if too long.
	sockopt="-k '$run'"
	((${#run} + 16 > 107)) && sockopt="-k ''"
	_agentcard_log "starting the private PostgreSQL cluster in $data on 127.0.0.1:$port (log: $log)"
	# The server must not inherit the lock (nor our stdout/stderr: -l).
	if ! (cd "$pgdir" && "${as_owner[@]}" "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 \
		-o "-p $port $sockopt -c listen_addresses=127.0.0.1" start) >&2 {lockfd}>&-; then
		tail -n 20 "$log" >&2 2>/dev/null || true
		_agentcard_die "could not start the private PostgreSQL cluster (log: $log);" \
			"if port $port is taken, set AGENTCARD_PG_PORT to another one"
		return 1
	fi
	AGENTCARD_PG_STARTED=1
}

_agentcard_private_cluster() {
	local bindir=$1 port=${AGENTCARD_PG_PORT:-54329} pgdir lockfd="" rc=0 ver err
	local url="postgres://postgres@127.0.0.1:$port/postgres"

	if [[ $EUID -eq 0 ]]; then
		if ! id -u postgres >/dev/null 2>&1; then
			_agentcard_log "creating the postgres system user"
			useradd --system --user-group --home-dir /var/lib/postgresql --no-create-home \
				--shell /usr/sbin/nologin postgres || return 1
		fi
		if ! command -v runuser >/dev/null 2>&1; then
			_agentcard_die "runuser is missing: PostgreSQL cannot run as root; set DATABASE_URL instead"
			return 1
		fi
	fi
	pgdir=$(_agentcard_private_dir) || return 1

	# An existing cluster needs the binaries of its own major version.
	if [[ -s $pgdir/data/PG_VERSION ]]; then
		ver=$(<"$pgdir/data/PG_VERSION")
		if ! bindir=$(_agentcard_pg_bindir "$ver"); then
			_agentcard_die "$pgdir/data is a PostgreSQL $ver cluster but there are no PostgreSQL $ver binaries;" \
				"remove $pgdir to start afresh"
			return 1
		fi
	fi

	# One start at a time (run.sh and test.sh may race on a first run).
	if command -v flock >/dev/null 2>&1 && [[ -w $pgdir ]]; then
		exec {lockfd}>"$pgdir/.lock"
		flock -w 120 "$lockfd" || _agentcard_log "warning: could not lock $pgdir/.lock; going on"
	fi
	_agentcard_private_start "$bindir" "$pgdir" "$port" "${lockfd:-9}" || rc=$?
	[[ -n $lockfd ]] && exec {lockfd}>&-
	((rc == 0)) || return "$rc"

	if ! err=$(_agentcard_probe "$url"); then
		_agentcard_die "the private PostgreSQL cluster does not answer on 127.0.0.1:$port: $err"
		return 1
	fi
	AGENTCARD_PG_URL=$url
	AGENTCARD_PG_SOURCE=private
	AGENTCARD_PG_DIR=$pgdir
	_AGENTCARD_PG_BINDIR=$bindir
}

agentcard_find_postgres() {
	local err maint bindir
	AGENTCARD_PG_URL=
	AGENTCARD_PG_SOURCE=
	AGENTCARD_PG_STARTED=0
	_agentcard_ensure_psql || return 1

	# 1. DATABASE_URL
	if [[ -n ${DATABASE_URL:-} ]]; then
		if err=$(_agentcard_probe "$DATABASE_URL"); then
			maint=$(_agentcard_url_with_db "$DATABASE_URL" postgres)
			if _agentcard_probe "$maint" >/dev/null; then
				AGENTCARD_PG_URL=$maint
			else
				AGENTCARD_PG_URL=$DATABASE_URL
			fi
			AGENTCARD_PG_SOURCE=database_url
			_agentcard_log "using the PostgreSQL server of DATABASE_URL ($(_agentcard_mask "$DATABASE_URL"))"
			return 0
		fi
		# An explicit choice that fails is reported, never replaced by another server.
		_agentcard_die "DATABASE_URL ($(_agentcard_mask "$DATABASE_URL")) cannot be used: ${err:-no error text}." \
			"Start that server, create that database or correct DATABASE_URL;" \
			"or unset DATABASE_URL to use 127.0.0.1:5432 or a private cluster"
		return 1
	fi

	# 2. 127.0.0.1:5432
	_agentcard_try_local && return 0

	# 3. private cluster, installing PostgreSQL first if need be
	if ! bindir=$(_agentcard_pg_bindir); then
		_agentcard_pg_install postgresql || return 1
		# Debian's package may have started its own cluster on 5432.
		_agentcard_try_local && return 0
		if ! bindir=$(_agentcard_pg_bindir); then
			_agentcard_die "no PostgreSQL server binaries found even after installing postgresql"
			return 1
		fi
	fi
	_agentcard_private_cluster "$bindir" || return 1
}

# agentcard_database_url NAME: URL of database NAME on the chosen server.
agentcard_database_url() {
	if [[ $# -ne 1 || -z $1 ]]; then
		_agentcard_die "usage: agentcard_database_url NAME"
		return 1
	fi
	if [[ -z $AGENTCARD_PG_URL ]]; then
		_agentcard_die "agentcard_database_url: call agentcard_find_postgres first"
		return 1
	fi
	_agentcard_url_with_db "$AGENTCARD_PG_URL" "$1"
}

# agentcard_ensure_database NAME: create database NAME unless it exists.
agentcard_ensure_database() {
	local name=${1:-} sql err
	if [[ $# -ne 1 || -z $name ]]; then
		_agentcard_die "usage: agentcard_ensure_database NAME"
		return 1
	fi
	if [[ -z $AGENTCARD_PG_URL ]]; then
		_agentcard_die "agentcard_ensure_database: call agentcard_find_postgres first"
		return 1
	fi
	sql="SELECT format('CREATE DATABASE %I', :'dbname')
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'dbname') \\gexec"
	if ! err=$(_agentcard_psql "$AGENTCARD_PG_URL" -v dbname="$name" <<<"$sql" 2>&1 >/dev/null); then
		# Another process may have created it meanwhile.
		if [[ $(_agentcard_psql "$AGENTCARD_PG_URL" -At -v dbname="$name" \
			<<<"SELECT count(*) FROM pg_database WHERE datname = :'dbname'" 2>/dev/null) == 1 ]]; then
			return 0
		fi
		printf '%s\n' "$err" >&2
		_agentcard_die "could not create database $name"
		return 1
	fi
}

agentcard_pg_server_bindir() {
	_agentcard_pg_bindir && return 0
	_agentcard_pg_install postgresql || return 1
	_agentcard_pg_bindir || _agentcard_die "no PostgreSQL server binaries found even after installing postgresql"
}

# Stop the private cluster if agentcard_find_postgres started it.
agentcard_stop_private_postgres() {
	local -a as_owner=()
	[[ $AGENTCARD_PG_SOURCE == private && $AGENTCARD_PG_STARTED == 1 ]] || return 0
	[[ $EUID -eq 0 ]] && as_owner=(runuser -u postgres --)
	_agentcard_log "stopping the private PostgreSQL cluster in $AGENTCARD_PG_DIR/data"
	if ! (cd "$AGENTCARD_PG_DIR" && "${as_owner[@]}" "$_AGENTCARD_PG_BINDIR/pg_ctl" \
		-D "$AGENTCARD_PG_DIR/data" -m fast -w stop) >&2; then
		_agentcard_die "could not stop the private PostgreSQL cluster"
		return 1
	fi
	AGENTCARD_PG_STARTED=0
}
