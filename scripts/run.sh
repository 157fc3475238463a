#!/usr/bin/env bash
# scripts/run.sh [--fresh] [SERVE ARGS...]: build agentcard, migrate its database, load
# demo data when there is no organisation yet, and serve.
#
# Standard output holds only what a user needs, as a shell script of comments and
# commands: the console's address with a link that lets the demo organisation's owner set a
# password and sign in, the demo's requests to paste (each after a comment saying what it
# answers) and how to call the CLI. It is printed once the service answers on /health; a
# service that stops before (its error on standard error) ends run.sh with a failing status
# and nothing on standard output. Progress goes to standard error.
#
# The console is served on AGENTCARD_CONSOLE_HOST, by default console.localhost, a name
# browsers resolve to loopback: http://console.localhost:8080/ with the default listen address.
#
# Database: $DATABASE_URL when it is set (run.sh stops, saying why, when it cannot be
# used: it never falls back to another server); otherwise database
# `agentcard` on the server scripts/lib/postgres.sh finds (the local one on
# 127.0.0.1:5432, or a private cluster in .pgdata/ it starts), created if
# missing. --fresh drops that `agentcard` database first and starts over (never
# a database of DATABASE_URL). Other arguments are passed to `agentcard serve`;
# the listen address is AGENTCARD_LISTEN (default 127.0.0.1:8080).
#
# It may install, saying so first: Debian's postgresql or postgresql-client with apt-get
# (scripts/lib/apt.sh) when no PostgreSQL server or psql is found; the crates of Cargo.lock, by
# cargo.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh

fresh=0
if [[ ${1:-} == --fresh ]]; then
	fresh=1
	shift
fi

agentcard_find_postgres
if [[ $AGENTCARD_PG_SOURCE == database_url ]]; then
	if ((fresh)); then
		echo "agentcard: error: --fresh drops only the database run.sh makes, and DATABASE_URL" \
			"names yours: empty it yourself, or unset DATABASE_URL" >&2
		exit 2
	fi
	# The user's own URL, which may hold a password: shown as the variable.
	database_shown="\"\$DATABASE_URL\""
else
	if ((fresh)); then
		echo "==> --fresh: dropping database agentcard" >&2
		_agentcard_psql "$AGENTCARD_PG_URL" -v dbname=agentcard \
			<<<'DROP DATABASE IF EXISTS :"dbname" WITH (FORCE)'
	fi
	agentcard_ensure_database agentcard
	DATABASE_URL=$(agentcard_database_url agentcard)
	database_shown="'$DATABASE_URL'"
fi
export DATABASE_URL
echo "agentcard: database $(_agentcard_mask "$DATABASE_URL")" >&2

locked=()
[[ -f Cargo.lock ]] && locked=(--locked)
echo "==> cargo build --release${locked[*]:+ ${locked[*]}}" >&2
cargo build --release "${locked[@]}"

bin=$(cd "${CARGO_TARGET_DIR:-target}/release" && pwd -P)/agentcard
cli="DATABASE_URL=$database_shown $bin"

# The demo's sites end in .example, which never resolve: no icon is looked for.
export AGENTCARD_ICON_FETCH=off
export AGENTCARD_CONSOLE_HOST=${AGENTCARD_CONSOLE_HOST:-console.localhost}
listen=${AGENTCARD_LISTEN:-127.0.0.1:8080}
console_url=${AGENTCARD_CONSOLE_URL:-http://$AGENTCARD_CONSOLE_HOST:${listen##*:}}

echo "==> agentcard migrate" >&2
"$bin" migrate >&2

# The block of standard output, made now and printed once the service answers.
block() {
	local orgs org owner link
	orgs=$(psql -X -w -At -v ON_ERROR_STOP=1 -d "$DATABASE_URL" -c 'select count(*) from orgs')
	if [[ $orgs == 0 ]]; then
		echo "==> agentcard admin demo (no organisation yet: loading demo data)" >&2
		"$bin" admin demo --format text
	else
		echo "# The database already has $orgs organisation(s), so no demo data was loaded:"
		psql -X -w -At -F ' ' -v ON_ERROR_STOP=1 -d "$DATABASE_URL" \
			-c 'select id, name from orgs order by created_at, id limit 20' | sed 's/^/#   /'
		org=acc_…
		((orgs == 1)) && org=$(psql -X -w -At -v ON_ERROR_STOP=1 -d "$DATABASE_URL" -c 'select id from orgs')
		echo "# A new management token, then a new delivery key, for one of them (each printed once):"
		echo "$cli admin token create --org $org --name mine"
		echo "$cli admin key create --org $org --name mine"
		echo "# Or drop this database and start over with fresh demo data: scripts/run.sh --fresh"
		echo "# Console: $console_url/"
		owner=owner@lequotidien.example
		link=$("$bin" admin user reset --email "$owner" 2>/dev/null |
			sed -n 's/^ *"link": "\(.*\)",\{0,1\}$/\1/p' || true)
		if [[ -n $link ]]; then
			echo "# Sign in as $owner: open this link once, within 7 days, to set the password:"
			echo "#   $link"
		else
			echo "# Make yourself a person of an organisation, then open the link it prints:"
			echo "$cli admin user create --email you@example.org --org $org --role owner"
		fi
	fi
	echo
	echo "# The CLI, with the database used here (its commands: admin --help):"
	echo "$cli admin --help"
}
printed=$(block)

# The address serve listens on: --listen among the arguments, else AGENTCARD_LISTEN.
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case ${args[i]} in
	--listen=*) listen=${args[i]#--listen=} ;;
	--listen) listen=${args[i + 1]:-$listen} ;;
	esac
done

# health_ok ADDRESS: whether GET /health answers 200 on ADDRESS (host:port; an unspecified
# host is reached on loopback).
health_ok() {
	local host=${1%:*} port=${1##*:} status
	host=${host#[}
	host=${host%]}
	case $host in 0.0.0.0) host=127.0.0.1 ;; :: | "") host=::1 ;; esac
	# In a subshell: a connection refused ends it, not run.sh.
	status=$(
		exec 3<>"/dev/tcp/$host/$port" || exit 1
		printf 'GET /health HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$host" >&3
		read -r -t 2 line <&3 && printf '%s' "$line"
	) 2>/dev/null || return 1
	[[ $status == "HTTP/1.1 200"* ]]
}

echo "==> agentcard serve${*:+ $*} (listening on $listen)" >&2
"$bin" serve "$@" &
server=$!
# Ctrl-C reaches the service too; TERM is passed on. Either way it drains and stops.
trap 'kill -TERM "$server" 2>/dev/null || true' INT TERM
for ((tries = 0; ; tries++)); do
	health_ok "$listen" && break
	if ! kill -0 "$server" 2>/dev/null; then
		status=0
		wait "$server" || status=$?
		echo "agentcard: error: agentcard serve stopped (status $status) before answering on $listen;" \
			"its error is above" >&2
		exit $((status == 0 ? 1 : status))
	fi
	if ((tries == 1200)); then
		kill -TERM "$server" 2>/dev/null || true
		wait "$server" || true
		echo "agentcard: error: agentcard serve did not answer on http://$listen/health within 2 minutes" >&2
		exit 1
	fi
	sleep 0.1
done
printf '%s\n' "$printed"
status=0
while :; do
	wait "$server" || status=$?
	kill -0 "$server" 2>/dev/null || break
done
exit "$status"
