#!/usr/bin/env bash
# scripts/failover-drill.sh [--async]: the PostgreSQL primary of a fleet killed under load and
# its standby promoted, as a failover manager (Patroni, a cloud's managed failover) does it:
# does any request fail that should not, is any write or count lost or doubled, how long until
# writes succeed again?
#
# 1. Builds the binary (BUILD_PROFILE, default release: cargo's own settings). Starts a primary
#    (a private cluster in a temporary folder, port 18350) and a streaming standby made from it
#    with pg_basebackup (port 18351), synchronous (synchronous_standby_names '*': a commit is
#    acknowledged once the standby has it), or asynchronous with --async. Migrates, makes the
#    demo data, WRITERS management tokens and a console viewer of the demo organisation.
# 2. Starts INSTANCES (3) `agentcard serve` on 127.0.0.1:18301… behind HAProxy on :18300
#    (scripts/lib/fleet.sh), with DATABASE_URL naming both hosts with
#    target_session_attrs=read-write and AGENTCARD_REPLICA_URL the standby.
# 3. Under load through HAProxy: wrk on GET /fragment (a card served); /v1 writes, a new site
#    each (PUT /v1/sites/wN.failover.example), one every 0.2 s in turn over the tokens; the
#    console's Reports page every 0.5 s, signed in. After SETTLE seconds: the primary's
#    postmaster gets SIGKILL; PROMOTE_AFTER seconds later `pg_ctl promote` on the standby;
#    then until a write succeeds again, and SETTLE more seconds.
# 4. Stops the load and the instances (SIGTERM: their last flush goes to the new primary), and
#    prints the requests made and failed by status (a 503 with or without Retry-After), the
#    time from the kill to `pg_ctl promote` and to the answer of the first write sent after the
#    kill that succeeded, the report's count on the new primary against the /fragment requests
#    the instances answered (HAProxy's count of the backend's responses, less the writes and the
#    console's reads), and the writes acknowledged before the kill that the new primary does
#    not hold.
#    Targets, synchronous: 0 failed /fragment requests, no /v1 answer 500, every 503 with
#    Retry-After, no acknowledged write lost, the count equal to the requests answered; the
#    script exits non-zero when one is missed. Asynchronous: the losses are measured and said.
#
# scripts/test.sh does not run it. wrk, curl, HAProxy and PostgreSQL's server are installed
# from Debian's packages when absent (scripts/lib/apt.sh). Everything started here is stopped
# on exit.
# Knobs (environment): INSTANCES (3), CONNECTIONS (64), THREADS wrk threads (2), DRAIN_MS
# (5000), SETTLE seconds (5), PROMOTE_AFTER seconds (3), WRITERS tokens (6), BUILD_PROFILE
# (release), AGENTCARD_BIN (a binary built already: nothing is built).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=failover-drill
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

readonly LB_PORT=18300 FIRST_PORT=18301 PG_PORT=18350 STANDBY_PORT=18351 STATS_PORT=18399
readonly DATABASE=agentcard_failover
readonly AGENT_UA="GPTBot/1.2"
readonly CONSOLE_HOST=console.localhost
readonly EMAIL=viewer@failover.example PASSWORD="a failover drill's passphrase"

MODE=synchronous
case ${1:-} in
--async) MODE=asynchronous ;;
-h | --help)
	bench_usage scripts/failover-drill.sh
	exit 0
	;;
"") ;;
*)
	bench_usage scripts/failover-drill.sh >&2
	exit 2
	;;
esac
SETTLE=$(knob SETTLE "${SETTLE:-5}" 600)
PROMOTE_AFTER=$(knob PROMOTE_AFTER "${PROMOTE_AFTER:-3}" 600)
WRITERS=$(knob WRITERS "${WRITERS:-6}" 50)
PREBUILT_BIN=${AGENTCARD_BIN:-}

# shellcheck source=scripts/lib/fleet.sh
source scripts/lib/fleet.sh
fleet_setup agentcard-failover-drill

STANDBY_DIR=$WORKDIR/standby
STOP_FILE=$WORKDIR/stop
WRITES_LOG=$WORKDIR/writes.log
READS_LOG=$WORKDIR/reads.log
COOKIE_JAR=$WORKDIR/cookies.txt
cleanup() {
	touch "$STOP_FILE"
	if [[ -n $PG_BINDIR && -f $STANDBY_DIR/data/postmaster.pid ]]; then
		as_cluster_owner "$PG_BINDIR/pg_ctl" -D "$STANDBY_DIR/data" -m immediate -w stop \
			>/dev/null 2>&1 || true
	fi
	fleet_cleanup
}

now_ms() {
	date +%s%3N
}

# psql_at PORT SQL: one value, from the database of the drill on the server at PORT.
psql_at() {
	PGCONNECT_TIMEOUT=10 psql -X -w -Atq -d "postgres://postgres@127.0.0.1:$1/$DATABASE" -c "$2"
}

# ---------------------------------------------------------------- the clusters

start_standby() {
	mkdir -p "$STANDBY_DIR/run"
	((EUID == 0)) && chown -R postgres: "$STANDBY_DIR"
	as_cluster_owner "$PG_BINDIR/pg_basebackup" -h 127.0.0.1 -p "$PG_PORT" -U postgres \
		-D "$STANDBY_DIR/data" -R -X stream --no-sync
	as_cluster_owner "$PG_BINDIR/pg_ctl" -D "$STANDBY_DIR/data" -l "$STANDBY_DIR/log" -w -t 60 \
		-o "-p $STANDBY_PORT -k '$STANDBY_DIR/run' -c listen_addresses=127.0.0.1 -c fsync=off" \
		start >/dev/null
	local tries
	for ((tries = 0; tries < 300; tries++)); do
		[[ $(psql_at "$PG_PORT" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") == 1 ]] &&
			break
		sleep 0.1
	done
	((tries < 300)) || die "the standby does not stream from the primary"
	if [[ $MODE == synchronous ]]; then
		psql_at "$PG_PORT" "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
		psql_at "$PG_PORT" "SELECT pg_reload_conf()" >/dev/null
		for ((tries = 0; tries < 300; tries++)); do
			[[ $(psql_at "$PG_PORT" "SELECT sync_state FROM pg_stat_replication") == sync ]] && break
			sleep 0.1
		done
	fi
	echo "standby on 127.0.0.1:$STANDBY_PORT: $(psql_at "$PG_PORT" "SELECT state || ', ' || sync_state FROM pg_stat_replication")"
}

# kill_primary: SIGKILL to the primary's postmaster and to its processes at once, as when its
# machine dies.
kill_primary() {
	local pid
	local -a children
	pid=$(head -n 1 "$PG_DIR/data/postmaster.pid")
	mapfile -t children < <(pgrep -P "$pid" || true)
	kill -KILL "$pid" "${children[@]}"
	echo "primary (postmaster pid $pid and its ${#children[@]} processes): SIGKILL"
}

promote_standby() {
	as_cluster_owner "$PG_BINDIR/pg_ctl" -D "$STANDBY_DIR/data" -w -t 60 promote >/dev/null
	echo "standby promoted: pg_is_in_recovery = $(psql_at "$STANDBY_PORT" "SELECT pg_is_in_recovery()")"
}

# ---------------------------------------------------------------- people and tokens

# make_tokens: WRITERS management tokens of the demo organisation, in TOKENS.
make_tokens() {
	local n
	TOKENS=()
	for ((n = 0; n < WRITERS; n++)); do
		TOKENS+=("$(DATABASE_URL=$DB_URL "$AGENTCARD_BIN" admin token create --org "$ORG" --name "writer $n" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')")
	done
}

# make_viewer: a viewer of the demo organisation, signed in on instance 0 (the session is the
# fleet's), its cookies in COOKIE_JAR.
make_viewer() {
	local port origin link status
	port=$(instance_port 0)
	origin=http://$CONSOLE_HOST:$port
	link=$(DATABASE_URL=$DB_URL AGENTCARD_LISTEN=127.0.0.1:$port AGENTCARD_CONSOLE_HOST=$CONSOLE_HOST \
		"$AGENTCARD_BIN" admin user create --email "$EMAIL" --org "$ORG" --role viewer |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["link"])')
	[[ $link == "$origin/link/"* ]] || die "admin user create printed no link"
	status=$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: $CONSOLE_HOST:$port" \
		-H "Origin: $origin" --data-urlencode "new_password=$PASSWORD" \
		"http://127.0.0.1:$port${link#"$origin"}")
	[[ $status == 303 ]] || die "setting the viewer's password answered $status"
	status=$(curl -sS -o /dev/null -w '%{http_code}' -c "$COOKIE_JAR" -H "Host: $CONSOLE_HOST:$port" \
		-H "Origin: $origin" --data-urlencode "email=$EMAIL" --data-urlencode "password=$PASSWORD" \
		"http://127.0.0.1:$port/sign-in")
	[[ $status == 303 ]] || die "the viewer's sign-in answered $status"
	echo "console viewer $EMAIL: signed in"
}

# ---------------------------------------------------------------- the load beside wrk

# write_loop: a new site every 0.2 s through HAProxy, the tokens in turn; a line per write:
# the times it was sent and answered (ms), its status, its Retry-After, its domain.
write_loop() {
	local n=0 sent answer status retry_after
	while [[ ! -e $STOP_FILE ]]; do
		sent=$(now_ms)
		answer=$(curl -sS -o /dev/null --max-time 30 -w '%{http_code} %header{retry-after}' -X PUT \
			-H "Authorization: Bearer ${TOKENS[n % WRITERS]}" -H 'Content-Type: application/json' \
			-d '{}' "http://127.0.0.1:$LB_PORT/v1/sites/w$n.failover.example" || echo "000")
		read -r status retry_after <<<"$answer"
		echo "$sent $(now_ms) ${status:-000} ${retry_after:--} w$n.failover.example" >>"$WRITES_LOG"
		n=$((n + 1))
		sleep 0.2
	done
}

# read_loop: the console's Reports page every 0.5 s through HAProxy; a line per read: the time
# (ms) and its status.
read_loop() {
	local status
	while [[ ! -e $STOP_FILE ]]; do
		status=$(curl -sS -o /dev/null --max-time 30 -w '%{http_code}' -b "$COOKIE_JAR" \
			-H "Host: $CONSOLE_HOST" "http://127.0.0.1:$LB_PORT/reports?window=24h" || echo "000")
		echo "$(now_ms) $status" >>"$READS_LOG"
		sleep 0.5
	done
}

start_loops() {
	: >"$WRITES_LOG"
	: >"$READS_LOG"
	write_loop &
	WRITE_PID=$!
	STARTED_PIDS+=("$WRITE_PID")
	read_loop &
	READ_PID=$!
	STARTED_PIDS+=("$READ_PID")
}

stop_loops() {
	touch "$STOP_FILE"
	wait "$WRITE_PID" "$READ_PID" || true
	forget "$WRITE_PID"
	forget "$READ_PID"
}

# first_write_ok_after MS: when the first write sent after MS that succeeded was answered.
first_write_ok_after() {
	awk -v t="$1" '$1 > t && $3 ~ /^20/ { print $2; exit }' "$WRITES_LOG"
}

# by_status FILE COLUMN: "status: count" for each status in the column, most first.
by_status() {
	awk -v c="$2" '{ n[$c]++ } END { for (s in n) printf "%s: %d\n", s, n[s] }' "$1" | sort
}

# ---------------------------------------------------------------- the run

section "PostgreSQL: a primary and a $MODE standby; build; data"
ensure_fleet_tools
cluster_create
PGCONNECT_TIMEOUT=10 psql -X -w -q -d "postgres://postgres@127.0.0.1:$PG_PORT/postgres" \
	-c "CREATE DATABASE $DATABASE"
start_standby
DB_URL="postgres://postgres@127.0.0.1:$PG_PORT,127.0.0.1:$STANDBY_PORT/$DATABASE?target_session_attrs=read-write"
echo "DATABASE_URL=$DB_URL"
if [[ -n $PREBUILT_BIN ]]; then
	AGENTCARD_BIN=$PREBUILT_BIN
	echo "binary: $AGENTCARD_BIN (AGENTCARD_BIN, not built here)"
else
	BUILD_PROFILE=${BUILD_PROFILE:-release} build_profile --bin agentcard
fi
DATABASE_URL=$DB_URL "$AGENTCARD_BIN" migrate >/dev/null
DATABASE_URL=$DB_URL "$AGENTCARD_BIN" admin demo >"$WORKDIR/demo.json"
read_demo
ORG=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["organisation"]["id"])' "$WORKDIR/demo.json")
make_tokens

section "fleet: $INSTANCES instances behind HAProxy on 127.0.0.1:$LB_PORT"
export AGENTCARD_CONSOLE_HOST=$CONSOLE_HOST
export AGENTCARD_REPLICA_URL="postgres://postgres@127.0.0.1:$STANDBY_PORT/$DATABASE"
start_fleet
make_viewer

section "the failover, under load"
start_load failover
start_loops
sleep "$SETTLE"
KILLED_AT=$(now_ms)
kill_primary
sleep "$PROMOTE_AFTER"
PROMOTED_AT=$(now_ms)
promote_standby
for ((tries = 0; tries < 600; tries++)); do
	[[ -n $(first_write_ok_after "$KILLED_AT") ]] && break
	sleep 0.1
done
WRITES_BACK_AT=$(first_write_ok_after "$KILLED_AT")
[[ -n $WRITES_BACK_AT ]] || die "no write succeeded within 60 s of the promotion"
sleep "$SETTLE"
stop_loops
stop_load

section "stop: every instance by SIGTERM"
writes=$(wc -l <"$WRITES_LOG")
reads=$(wc -l <"$READS_LOG")
answered=$(($(backend_responses) - writes - reads))
for ((i = 0; i < INSTANCES; i++)); do
	stop_instance "$i"
done
counted=$(report_total)
read -r _ requests non2xx errors < <(tail -n 1 "$RESULTS")
awk '$3 ~ /^20/ && $2 < '"$KILLED_AT"' { print $5 }' "$WRITES_LOG" | sort >"$WORKDIR/acknowledged"
PGCONNECT_TIMEOUT=10 psql -X -w -Atq -d "$DB_URL" \
	-c "SELECT domain FROM sites WHERE domain LIKE 'w%.failover.example'" | sort >"$WORKDIR/held"
lost_writes=$(comm -23 "$WORKDIR/acknowledged" "$WORKDIR/held" | wc -l)
writes_500=$(awk '$3 == 500' "$WRITES_LOG" | wc -l)
unavailable_without_retry=$(awk '$3 == 503 && $4 == "-"' "$WRITES_LOG" | wc -l)

section "failover to the $MODE standby: $INSTANCES instances behind HAProxy, $CONNECTIONS connections"
machine
echo "/fragment: $requests requests, $non2xx non-2xx, $errors socket errors"
echo "/v1 writes: $writes, by status (000: no answer):"
by_status "$WRITES_LOG" 3 | sed 's/^/  /'
echo "  503 without Retry-After: $unavailable_without_retry"
echo "console reads (Reports page): $reads, by status:"
by_status "$READS_LOG" 2 | sed 's/^/  /'
echo "kill to \`pg_ctl promote\`: $((PROMOTED_AT - KILLED_AT)) ms (PROMOTE_AFTER $PROMOTE_AFTER s)"
echo "kill to the first write that succeeded: $((WRITES_BACK_AT - KILLED_AT)) ms; \`pg_ctl promote\` to it: $((WRITES_BACK_AT - PROMOTED_AT)) ms"
echo "writes acknowledged before the kill: $(wc -l <"$WORKDIR/acknowledged"); not on the new primary: $lost_writes"
echo "/fragment requests answered by the instances: $answered; counted by the report on the new primary: $counted (difference $((counted - answered)))"
echo "instances that exited with a status other than 0: $BAD_EXITS"
if [[ $MODE == synchronous ]]; then
	((non2xx + errors == 0)) || die "/fragment requests failed"
	((writes_500 == 0 && unavailable_without_retry == 0)) || die "a write answered 500, or 503 without Retry-After"
	((lost_writes == 0)) || die "acknowledged writes were lost"
	((counted == answered)) || die "the report's count differs from the requests answered"
	echo "failover-drill: 0 failed /fragment, writes 503 with Retry-After until the new primary, nothing lost, counts exact"
fi
