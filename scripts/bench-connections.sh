#!/usr/bin/env bash
# scripts/bench-connections.sh [COUNT]: idle connections against agentcard serve.
#
# Starts a release `agentcard serve` on 127.0.0.1:18090 (database `agentcard_bench_conn`,
# recreated, on the server scripts/lib/postgres.sh finds), then three times opens COUNT
# (default 20 000) connections (scripts/bench/idle_connections.py): sending nothing, all from
# 127.0.0.1 (the per-address share applies); sending nothing, spread over 100 loopback
# addresses (memory per idle connection, shedding near the open-files limit); and the same
# after one keep-alive request each (the buffers a request allocated, given back when idle). Each time it prints the
# connections the server kept, its resident memory per connection, and how long a client from
# another address waited for GET /health. Figures are recorded in docs/performance.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh

count=${1:-20000}
if ! [[ $count =~ ^[1-9][0-9]*$ ]] || ((count > 50000)); then
	echo "bench-connections: COUNT must be an integer from 1 to 50000" >&2
	exit 2
fi
readonly PORT=18090 DATABASE=agentcard_bench_conn

agentcard_find_postgres
url=$(agentcard_database_url "$DATABASE")
psql -X -q -d "$AGENTCARD_PG_URL" -c "DROP DATABASE IF EXISTS $DATABASE" -c "CREATE DATABASE $DATABASE"
cargo build --profile bench-lto --locked --bin agentcard >&2

DATABASE_URL=$url AGENTCARD_LISTEN=127.0.0.1:$PORT RUST_LOG=warn \
	target/bench-lto/agentcard serve &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	curl -fs "http://127.0.0.1:$PORT/health" >/dev/null && break
	sleep 0.1
done

echo "== $count idle connections from one address"
python3 scripts/bench/idle_connections.py "127.0.0.1:$PORT" "$pid" "$count" 1
echo "== $count idle connections from 100 addresses"
python3 scripts/bench/idle_connections.py "127.0.0.1:$PORT" "$pid" "$count" 100
echo "== $count connections from 100 addresses, idle after one request each"
python3 scripts/bench/idle_connections.py "127.0.0.1:$PORT" "$pid" "$count" 100 --after-a-request
echo "== open-files limit of the server: $(awk '/Max open files/ {print $4}' "/proc/$pid/limits")"
