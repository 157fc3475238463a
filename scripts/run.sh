#!/usr/bin/env bash
# scripts/run.sh [--fresh] [SERVE ARGS...]: build agentcard, migrate its database, load
# demo data when there is no organisation yet, and serve.
#
# Standard output holds only what a user needs, as a shell script of comments and
# commands: the console's address with a link that lets the demo organisation's owner set a
# password and sign in, the demo's requests to paste (each after a comment saying what it
# answers) and how to call the CLI. Progress goes to standard error.
#
# The console is served on AGENTCARD_CONSOLE_HOST, by default console.localhost, a name
# browsers resolve to loopback: http://console.localhost:8080/ with the default listen address.
#
# Database: $DATABASE_URL when it is set and answers; otherwise database
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

echo "==> agentcard serve${*:+ $*} (listening on ${AGENTCARD_LISTEN:-127.0.0.1:8080})" >&2
exec "$bin" serve "$@"
