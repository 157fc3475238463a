#!/usr/bin/env bash
# scripts/run.sh [SERVE ARGS...]: build agentcard, migrate its database, load
# demo data when there is no organisation yet, and serve.
#
# Database: $DATABASE_URL when it is set and answers; otherwise database
# `agentcard` on the server scripts/lib/postgres.sh finds (the local one on
# 127.0.0.1:5432, or a private cluster in .pgdata/ it starts), created if
# missing. Arguments are passed to `agentcard serve`; the listen address is
# AGENTCARD_LISTEN (default 127.0.0.1:8080).
#
# It may install, saying so first: Debian's postgresql or postgresql-client with apt-get
# (scripts/lib/apt.sh) when no PostgreSQL server or psql is found; the crates of Cargo.lock, by
# cargo.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh

agentcard_find_postgres
if [[ $AGENTCARD_PG_SOURCE != database_url ]]; then
	agentcard_ensure_database agentcard
	DATABASE_URL=$(agentcard_database_url agentcard)
fi
export DATABASE_URL
echo "agentcard: database $(_agentcard_mask "$DATABASE_URL")" >&2

locked=()
[[ -f Cargo.lock ]] && locked=(--locked)
echo "==> cargo build --release${locked[*]:+ ${locked[*]}}" >&2
cargo build --release "${locked[@]}"

bin=${CARGO_TARGET_DIR:-target}/release/agentcard

echo "==> agentcard migrate" >&2
"$bin" migrate

orgs=$(psql -X -w -At -v ON_ERROR_STOP=1 -d "$DATABASE_URL" -c 'select count(*) from orgs')
if [[ $orgs == 0 ]]; then
	echo "==> agentcard admin demo (no organisation yet: loading demo data)" >&2
	"$bin" admin demo
	echo
else
	echo "agentcard: the database already has $orgs organisation(s); no demo data loaded" >&2
fi

echo "==> agentcard serve${*:+ $*} (listening on ${AGENTCARD_LISTEN:-127.0.0.1:8080})" >&2
exec "$bin" serve "$@"
