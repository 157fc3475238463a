#!/usr/bin/env bash
# scripts/restore-drill.sh: a backup taken, the database lost, the backup restored into a new
# database, the service started on it: does it give back what it gave before?
#
# 1. On the PostgreSQL server scripts/lib/postgres.sh finds, makes database
#    agentcard_drill_src afresh, migrates it and loads the demo data (`agentcard admin demo`);
#    serves it and sends REQUESTS /fragment requests (default 500, with a card, a no-fill and
#    refusals among them), then stops the service by SIGTERM so that the report is flushed.
# 2. Reads "before": every `/v1` listing of the demo organisation (me, sites, each site's
#    fragments and routes, cards and their eligibility, keys) through a serving instance,
#    `agentcard admin report --by site` (JSON) with its totals, and every request the report
#    counted (all organisations, refusals included).
# 3. pg_dump -Fc of the database; the database dropped; a new one, agentcard_drill_dst,
#    made and restored with pg_restore; the service started on it (its start migrates, which
#    must find nothing to do).
# 4. Reads "after" the same way, and compares: equal, or the differences and a failing exit.
# Prints each step with its time and the dump's size. AGENTCARD_BIN=PATH uses that binary
# instead of building the release one. Both databases are dropped on exit.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=restore-drill
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh
# shellcheck source=scripts/lib/ports.sh
source scripts/lib/ports.sh

bench_args scripts/restore-drill.sh "$@"
REQUESTS=$(knob REQUESTS "${REQUESTS:-500}" 1000000)
readonly SRC=agentcard_drill_src DST=agentcard_drill_dst

bench_server_env
bench_workdir agentcard-restore-drill
cleanup() {
	stop_started
	if [[ -n ${AGENTCARD_PG_URL:-} ]]; then
		psql -X -w -q -d "$AGENTCARD_PG_URL" -c 'SET client_min_messages = warning' \
			-c "DROP DATABASE IF EXISTS $SRC WITH (FORCE)" \
			-c "DROP DATABASE IF EXISTS $DST WITH (FORCE)" >/dev/null 2>&1 || true
	fi
	rm -rf "$WORKDIR"
	agentcard_stop_private_postgres >/dev/null 2>&1 || true
}

STEP_STARTED=0
step() {
	STEP_STARTED=$(date +%s%3N)
	section "$*"
}
step_done() {
	echo "($(($(date +%s%3N) - STEP_STARTED)) ms)"
}

# serve URL: starts `agentcard serve` on DATABASE URL and a free port; sets SERVER_PID, BASE.
serve() {
	local port
	port=$(free_ports 1)
	BASE=http://127.0.0.1:$port
	DATABASE_URL=$1 AGENTCARD_LISTEN=127.0.0.1:$port AGENTCARD_DRAIN_MS=0 RUST_LOG=info \
		"$AGENTCARD_BIN" serve >>"$WORKDIR/serve.log" 2>&1 &
	SERVER_PID=$!
	STARTED_PIDS+=("$SERVER_PID")
	wait_http "agentcard serve" "$SERVER_PID" "$BASE/ready" "$WORKDIR/serve.log"
}

stop_serving() {
	kill -TERM "$SERVER_PID"
	wait "$SERVER_PID" || die "agentcard serve exited with status $? (log: $WORKDIR/serve.log)"
	forget "$SERVER_PID"
}

v1() {
	curl -fsS -H "Authorization: Bearer $TOKEN" "$BASE$1"
}

# snapshot URL FILE: every /v1 listing and the report of the organisation, one JSON document.
snapshot() {
	local url=$1 out=$2 site card
	serve "$url"
	{
		echo "me $(v1 /v1/me)"
		echo "sites $(v1 /v1/sites)"
		for site in $(v1 /v1/sites | python3 -c 'import json,sys; print(*[s["domain"] for s in json.load(sys.stdin)["items"]])'); do
			echo "fragments $site $(v1 "/v1/sites/$site/fragments")"
			echo "routes $site $(v1 "/v1/sites/$site/routes")"
		done
		echo "cards $(v1 /v1/cards)"
		for card in $(v1 /v1/cards | python3 -c 'import json,sys; print(*[c["id"] for c in json.load(sys.stdin)["items"]])'); do
			echo "eligibility $card $(v1 "/v1/cards/$card/eligibility")"
		done
		echo "keys $(v1 /v1/keys)"
		echo "report $(DATABASE_URL=$url "$AGENTCARD_BIN" admin report --org "$ORG" --by site \
			--until "$UNTIL" --format json | tr -d '\n')"
		echo "counted $(psql -X -w -Atq -d "$url" -c 'SELECT (SELECT coalesce(sum(requests), 0)
			FROM report_minutes) + (SELECT coalesce(sum(requests), 0) FROM report_hours)')"
	} >"$out"
	stop_serving
	echo "$(wc -l <"$out") listings; report totals: $(totals "$out")"
}

# totals FILE: the organisation's report totals and every request counted, of a snapshot.
totals() {
	printf '%s, all organisations: %s requests' \
		"$(sed -n 's/^report //p' "$1" | python3 -c 'import json, sys
r = json.load(sys.stdin)
print(", ".join(f"{k} {r[k]}" for k in ("requests", "served", "refused")))')" \
		"$(sed -n 's/^counted //p' "$1")"
}

step "PostgreSQL and the binary"
agentcard_find_postgres
if [[ -z ${AGENTCARD_BIN:-} ]]; then
	BUILD_PROFILE=${BUILD_PROFILE:-release} build_profile --bin agentcard
fi
SRC_URL=$(agentcard_database_url "$SRC")
DST_URL=$(agentcard_database_url "$DST")
psql -X -w -q -d "$AGENTCARD_PG_URL" -c 'SET client_min_messages = warning' \
	-c "DROP DATABASE IF EXISTS $SRC WITH (FORCE)" -c "DROP DATABASE IF EXISTS $DST WITH (FORCE)"
agentcard_ensure_database "$SRC"
DATABASE_URL=$SRC_URL "$AGENTCARD_BIN" migrate >/dev/null
DATABASE_URL=$SRC_URL "$AGENTCARD_BIN" admin demo --format json >"$WORKDIR/demo.json"
read -r ORG KEY TOKEN FRAGMENT < <(python3 - "$WORKDIR/demo.json" <<-'EOF'
	import json, sys
	demo = json.load(open(sys.argv[1]))
	home = next(f["id"] for f in demo["fragments"] if f["ref"] == "/home")
	print(demo["organisation"]["id"], demo["delivery_key"], demo["management_token"], home)
EOF
)
step_done

step "traffic: $REQUESTS /fragment requests, then a stop that flushes the report"
serve "$SRC_URL"
{
	for ((n = 0; n < REQUESTS; n++)); do
		case $((n % 5)) in
		0) page=politique/article-$n ;;
		1) page=archives/article-$n ;;
		*) page=article-$n ;;
		esac
		key=$KEY
		((n % 25 == 24)) && key=svc_live_0000000000000000000000000000000000000000
		echo "url = \"$BASE/fragment?partner_id=$ORG&fragment_id=$FRAGMENT&lang=fr&api_key=$key&page_url=https%3A%2F%2Flequotidien.example%2F$page\""
		echo 'output = /dev/null'
	done
} >"$WORKDIR/curl.cfg"
curl -s -H 'X-Agent-UA: GPTBot/1.2' -K "$WORKDIR/curl.cfg"
stop_serving
# The report's window, the same before and after: up to an hour from now.
UNTIL=$(date -u -d '+1 hour' +%Y-%m-%dT%H:00:00Z)
step_done

step "before: the listings and the report"
snapshot "$SRC_URL" "$WORKDIR/before.txt"
step_done

step "pg_dump -Fc, then the database dropped"
pg_dump -Fc -d "$SRC_URL" -f "$WORKDIR/agentcard.dump"
echo "dump: $(stat -c %s "$WORKDIR/agentcard.dump") bytes"
psql -X -w -q -d "$AGENTCARD_PG_URL" -c "DROP DATABASE $SRC WITH (FORCE)"
step_done

step "restore into a new database, $DST"
agentcard_ensure_database "$DST"
pg_restore --no-owner --exit-on-error -d "$DST_URL" "$WORKDIR/agentcard.dump"
applied=$(DATABASE_URL=$DST_URL "$AGENTCARD_BIN" migrate)
echo "migrate on the restored database: $applied"
[[ $applied == '{"applied":[]}' ]] || die "the restored database lacked migrations: $applied"
step_done

step "after: the listings and the report, served from the restored database"
snapshot "$DST_URL" "$WORKDIR/after.txt"
step_done

section "result"
if ! diff -u "$WORKDIR/before.txt" "$WORKDIR/after.txt"; then
	die "the restored database gives other listings or totals (above)"
fi
echo "equal: $(wc -l <"$WORKDIR/before.txt") listings and the report (totals $(totals "$WORKDIR/after.txt"))"
