#!/usr/bin/env bash
# scripts/fleet.sh [--quick]: a fleet of `agentcard serve` behind HAProxy, tried as an operator
# runs one.
#
# 1. Starts a PostgreSQL cluster of its own (a temporary folder, port 18150: never the machine's
#    shared server, since phase (b) stops it), builds the release binary, migrates, and makes
#    the demo data (`agentcard admin demo`).
# 2. Starts INSTANCES `agentcard serve` (default 3) on 127.0.0.1:18101… over that database
#    (loopback a trusted proxy, X-Forwarded-For the client address), and HAProxy in the
#    foreground with its own configuration (WORKDIR/haproxy.cfg: roundrobin, checks of
#    `/ready` every second, fall 2, rise 2) on 127.0.0.1:18100, its statistics on :18199.
# 3. Under wrk load through HAProxy (GET /fragment, a card served; CONNECTIONS, THREADS), one
#    wrk run per phase:
#      steady    STEADY seconds, nothing happens;
#      rolling   every instance in turn: SIGTERM, its exit (status shown), a new one, until
#                HAProxy sees it UP again;
#      outage    the PostgreSQL cluster stopped for OUTAGE seconds, then started again, until
#                every instance says the database is up;
#      writes    WRITES management writes through HAProxy (a fragment paused, then active
#                again, in turn), each followed by the time until every instance, asked
#                directly, answers the new state (the write's propagation).
# 4. Stops the instances by SIGTERM (each must exit 0, its counts flushed) and compares the
#    report's total (report_minutes + report_hours) with the /fragment requests the
#    instances answered: HAProxy's count of the backend's responses, less the management
#    writes, plus the script's own direct requests of the writes phase.
# 5. Prints a table: per phase the requests wrk made, the failed ones (non-2xx answers and
#    socket errors), the propagation times, counted / answered. Targets: 0 failed requests in
#    every phase, counted = answered, every propagation under 1 s.
#
# wrk, curl and HAProxy are installed from Debian's packages with apt-get when absent (as root
# or with passwordless sudo: scripts/lib/apt.sh), PostgreSQL's server too. Everything started
# here is stopped on exit.
#
# Knobs (environment): INSTANCES (3), STEADY seconds (10; 5 with --quick or QUICK=1), OUTAGE
# seconds (30; 10 with --quick), WRITES (6), CONNECTIONS (64), THREADS wrk threads (2),
# DRAIN_MS each instance's AGENTCARD_DRAIN_MS (5000).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=fleet
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

readonly LB_PORT=18100 FIRST_PORT=18101 PG_PORT=18150 STATS_PORT=18199
readonly DATABASE=agentcard_fleet
readonly AGENT_UA="GPTBot/1.2"

bench_args scripts/fleet.sh "$@"
QUICK=${QUICK:-0}
INSTANCES=$(knob INSTANCES "${INSTANCES:-3}" 9)
STEADY=$(knob STEADY "${STEADY:-$((QUICK == 1 ? 5 : 10))}" 600)
OUTAGE=$(knob OUTAGE "${OUTAGE:-$((QUICK == 1 ? 10 : 30))}" 600)
WRITES=$(knob WRITES "${WRITES:-6}" 50)
CONNECTIONS=$(knob CONNECTIONS "${CONNECTIONS:-64}" 2000)
THREADS=$(knob THREADS "${THREADS:-2}" 64)
DRAIN_MS=$(knob DRAIN_MS "${DRAIN_MS:-5000}" 60000)

bench_server_env
bench_workdir agentcard-fleet

# ---------------------------------------------------------------- the private cluster

PG_DIR=$WORKDIR/pg
PG_BINDIR=

# as_cluster_owner COMMAND...: PostgreSQL refuses to run as root; its `postgres` user then
# runs it.
as_cluster_owner() {
	if ((EUID == 0)); then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

cluster_create() {
	PG_BINDIR=$(agentcard_pg_server_bindir)
	mkdir -p "$PG_DIR/run"
	((EUID == 0)) && chown -R postgres: "$PG_DIR"
	as_cluster_owner "$PG_BINDIR/initdb" -U postgres --auth=trust --encoding=UTF8 --locale=C \
		--no-sync -D "$PG_DIR/data" >"$PG_DIR/initdb.log" 2>&1 || {
		cat "$PG_DIR/initdb.log" >&2
		die "initdb failed"
	}
	cluster_start
}

cluster_start() {
	as_cluster_owner "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 60 \
		-o "-p $PG_PORT -k '$PG_DIR/run' -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
}

cluster_stop() {
	as_cluster_owner "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m "${1:-fast}" -w stop >/dev/null
}

# The clean-up of scripts/lib/bench.sh, and the cluster.
cleanup() {
	stop_started
	if [[ -n $PG_BINDIR ]]; then
		cluster_stop immediate 2>/dev/null || true
	fi
	rm -rf "$WORKDIR"
}

# ---------------------------------------------------------------- instances and HAProxy

declare -a INSTANCE_PIDS=()

instance_port() {
	echo $((FIRST_PORT + $1))
}

instance_log() {
	echo "$WORKDIR/instance$1.log"
}

start_instance() {
	local i=$1 port
	port=$(instance_port "$i")
	DATABASE_URL=$DB_URL AGENTCARD_LISTEN=127.0.0.1:$port AGENTCARD_TRUSTED_PROXIES=127.0.0.1 \
		AGENTCARD_CLIENT_IP_HEADER=X-Forwarded-For AGENTCARD_DRAIN_MS=$DRAIN_MS RUST_LOG=info \
		"$AGENTCARD_BIN" serve >>"$(instance_log "$i")" 2>&1 &
	INSTANCE_PIDS[i]=$!
	STARTED_PIDS+=("$!")
	wait_http "instance $i" "$!" "http://127.0.0.1:$port/ready" "$(instance_log "$i")"
}

# stop_instance I: SIGTERM, then its exit; a status other than 0 is a failure of the run.
stop_instance() {
	local i=$1 pid=${INSTANCE_PIDS[$1]} status=0
	kill -TERM "$pid"
	wait "$pid" || status=$?
	forget "$pid"
	echo "instance $i (pid $pid): SIGTERM, exit status $status"
	((status == 0)) || BAD_EXITS=$((BAD_EXITS + 1))
}

write_haproxy_cfg() {
	local i
	{
		cat <<-EOF
			global
			    maxconn 4096
			defaults
			    mode http
			    timeout connect 2s
			    timeout client 30s
			    timeout server 30s
			    timeout check 2s
			    option http-keep-alive
			    option forwardfor
			    retries 3
			    option redispatch
			frontend fleet
			    bind 127.0.0.1:$LB_PORT
			    default_backend agentcard
			backend agentcard
			    balance roundrobin
			    option httpchk
			    http-check send meth GET uri /ready
			    http-check expect status 200
			    default-server check inter 1s fall 2 rise 2
		EOF
		for ((i = 0; i < INSTANCES; i++)); do
			echo "    server instance$i 127.0.0.1:$(instance_port "$i")"
		done
		cat <<-EOF
			listen stats
			    bind 127.0.0.1:$STATS_PORT
			    stats enable
			    stats uri /stats
		EOF
	} >"$WORKDIR/haproxy.cfg"
}

start_haproxy() {
	write_haproxy_cfg
	haproxy -db -f "$WORKDIR/haproxy.cfg" >"$WORKDIR/haproxy.log" 2>&1 &
	STARTED_PIDS+=("$!")
	wait_http haproxy "$!" "http://127.0.0.1:$STATS_PORT/stats" "$WORKDIR/haproxy.log"
}

# haproxy_stat PROXY SERVER FIELD: one field of HAProxy's CSV statistics.
haproxy_stat() {
	curl -fsS "http://127.0.0.1:$STATS_PORT/stats;csv" | awk -F, -v p="$1" -v s="$2" -v f="$3" '
		NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) column[$i] = i; next }
		$1 == p && $2 == s { print $column[f] }'
}

# wait_up I: until HAProxy's checks have put instance I back in rotation (60 s at most).
wait_up() {
	local tries
	for ((tries = 0; tries < 600; tries++)); do
		[[ $(haproxy_stat agentcard "instance$1" status) == UP ]] && return 0
		sleep 0.1
	done
	die "HAProxy never saw instance $1 UP"
}

# Responses the instances gave through HAProxy, every status.
backend_responses() {
	local field total=0
	for field in hrsp_1xx hrsp_2xx hrsp_3xx hrsp_4xx hrsp_5xx hrsp_other; do
		total=$((total + $(haproxy_stat agentcard BACKEND "$field")))
	done
	echo "$total"
}

# ---------------------------------------------------------------- load and phases

# start_load PHASE: wrk through HAProxy until stop_load (it stops on SIGINT and prints its
# figures), in a session of its own (see wrk_session in scripts/lib/bench.sh).
start_load() {
	PHASE=$1
	setsid wrk -t "$THREADS" -c "$CONNECTIONS" -d 3600s --timeout 10s --latency \
		-H "X-Agent-UA: $AGENT_UA" "http://127.0.0.1:$LB_PORT$FRAGMENT_PATH" \
		>"$WORKDIR/wrk-$PHASE.txt" 2>&1 &
	WRK_PID=$!
	STARTED_PIDS+=("$WRK_PID")
	sleep 1
}

# stop_load: ends the phase's wrk run and records its figures in RESULTS (phase, requests,
# non-2xx, socket errors).
stop_load() {
	local requests non2xx errors
	kill -INT "$WRK_PID"
	wait "$WRK_PID" || die "wrk failed in phase $PHASE: $(cat "$WORKDIR/wrk-$PHASE.txt")"
	forget "$WRK_PID"
	read -r requests _ _ _ non2xx errors _ < <(parse_wrk "$WORKDIR/wrk-$PHASE.txt")
	printf '%s\t%s\t%s\t%s\n' "$PHASE" "$requests" "$non2xx" "$errors" >>"$RESULTS"
	echo "$PHASE: $requests requests, $non2xx non-2xx, $errors socket errors"
}

phase_steady() {
	section "steady: $STEADY s"
	start_load steady
	sleep "$STEADY"
	stop_load
}

phase_rolling() {
	local i
	section "rolling restart of $INSTANCES instances"
	start_load rolling
	for ((i = 0; i < INSTANCES; i++)); do
		stop_instance "$i"
		start_instance "$i"
		wait_up "$i"
		echo "instance $i: back in rotation"
	done
	sleep 2
	stop_load
}

# database_up_everywhere: every instance's /ready says the database is up.
database_up_everywhere() {
	local i
	for ((i = 0; i < INSTANCES; i++)); do
		curl -fsS "http://127.0.0.1:$(instance_port "$i")/ready" | grep -q '"database":"up"' || return 1
	done
}

phase_outage() {
	local tries
	section "database outage: $OUTAGE s"
	start_load outage
	sleep 2
	cluster_stop
	echo "PostgreSQL stopped"
	sleep "$OUTAGE"
	cluster_start
	echo "PostgreSQL started again"
	for ((tries = 0; tries < 600; tries++)); do
		database_up_everywhere && break
		sleep 0.1
	done
	database_up_everywhere || die "an instance still says the database is down"
	sleep 2
	stop_load
}

# fragment_status PORT: the status of GET /fragment for the written fragment, asked directly.
fragment_status() {
	curl -s -o /dev/null -w '%{http_code}' -H "X-Agent-UA: $AGENT_UA" \
		"http://127.0.0.1:$1$WRITTEN_PATH"
}

now_ms() {
	date +%s%3N
}

# propagate STATUS EXPECTED: writes the fragment's status through HAProxy, then waits until
# every instance answers EXPECTED (at most 30 s); the time it took goes to PROPAGATION.
propagate() {
	local status=$1 expected=$2 started i code pending
	local -A seen=()
	started=$(now_ms)
	code=$(curl -s -o "$WORKDIR/write.json" -w '%{http_code}' -X PUT \
		-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
		-d "{\"name\": \"Politique\", \"status\": \"$status\"}" \
		"http://127.0.0.1:$LB_PORT/v1/sites/$SITE/fragments/%2Fpolitique")
	MANAGEMENT_REQUESTS=$((MANAGEMENT_REQUESTS + 1))
	[[ $code == 200 ]] || die "the write answered $code: $(cat "$WORKDIR/write.json")"
	pending=$INSTANCES
	while ((pending > 0)); do
		(($(now_ms) - started < 30000)) || die "a write did not reach every instance within 30 s"
		for ((i = 0; i < INSTANCES; i++)); do
			[[ -n ${seen[$i]:-} ]] && continue
			code=$(fragment_status "$(instance_port "$i")")
			DIRECT_REQUESTS=$((DIRECT_REQUESTS + 1))
			if [[ $code == "$expected" ]]; then
				seen[$i]=1
				pending=$((pending - 1))
			fi
		done
	done
	PROPAGATION+=("$(($(now_ms) - started))")
	echo "write to $status: every instance within ${PROPAGATION[-1]} ms"
}

phase_writes() {
	local n
	section "writes: $WRITES through HAProxy, each until every instance answers it"
	start_load writes
	for ((n = 0; n < WRITES; n++)); do
		if ((n % 2 == 0)); then
			propagate paused 204
		else
			propagate active 200
		fi
		sleep 1
	done
	stop_load
}

# ---------------------------------------------------------------- the run

prepare() {
	section "PostgreSQL, build, data"
	ensure_bench_tools
	command -v haproxy >/dev/null || agentcard_apt_install haproxy || die "the fleet needs haproxy"
	haproxy -v | head -n 1
	cluster_create
	echo "PostgreSQL cluster of this run: $PG_DIR on 127.0.0.1:$PG_PORT"
	PGCONNECT_TIMEOUT=10 psql -X -w -q -d "postgres://postgres@127.0.0.1:$PG_PORT/postgres" \
		-c "CREATE DATABASE $DATABASE"
	DB_URL=postgres://postgres@127.0.0.1:$PG_PORT/$DATABASE
	build_profile --bin agentcard
	DATABASE_URL=$DB_URL "$AGENTCARD_BIN" migrate >/dev/null
	DATABASE_URL=$DB_URL "$AGENTCARD_BIN" admin demo >"$WORKDIR/demo.json"
	read_demo
}

# read_demo: what the load and the writes need of the demo data.
read_demo() {
	local values
	values=$(python3 - "$WORKDIR/demo.json" <<-'EOF'
		import json, sys
		demo = json.load(open(sys.argv[1]))
		ids = {f["ref"]: f["id"] for f in demo["fragments"] if f["site"] == "lequotidien.example"}
		print(demo["organisation"]["id"], demo["delivery_key"], demo["management_token"],
		      ids["/home"], ids["/politique"])
	EOF
	)
	local org key home politique
	read -r org key TOKEN home politique <<<"$values"
	SITE=lequotidien.example
	FRAGMENT_PATH="/fragment?partner_id=$org&fragment_id=$home&lang=fr&api_key=$key"
	WRITTEN_PATH="/fragment?partner_id=$org&fragment_id=$politique&lang=fr&api_key=$key"
}

report_total() {
	PGCONNECT_TIMEOUT=10 psql -X -w -Atq -d "$DB_URL" -c \
		'SELECT (SELECT coalesce(sum(requests), 0) FROM report_minutes)
		      + (SELECT coalesce(sum(requests), 0) FROM report_hours)'
}

summary() {
	local answered counted phase requests non2xx errors
	section "stop: every instance by SIGTERM"
	answered=$(($(backend_responses) - MANAGEMENT_REQUESTS + DIRECT_REQUESTS))
	for ((i = 0; i < INSTANCES; i++)); do
		stop_instance "$i"
	done
	counted=$(report_total)
	section "fleet of $INSTANCES behind HAProxy, $CONNECTIONS connections, drain $DRAIN_MS ms"
	machine
	printf '%-10s %12s %10s %14s\n' phase requests non-2xx "socket errors"
	while IFS=$'\t' read -r phase requests non2xx errors; do
		printf '%-10s %12s %10s %14s\n' "$phase" "$requests" "$non2xx" "$errors"
	done <"$RESULTS"
	echo "propagation of a write to every instance (ms): ${PROPAGATION[*]}"
	echo "/fragment requests answered by the instances: $answered (through HAProxy, and $DIRECT_REQUESTS direct)"
	echo "counted by the report: $counted"
	echo "instances that exited with a status other than 0: $BAD_EXITS"
}

RESULTS=$WORKDIR/results.tsv
: >"$RESULTS"
BAD_EXITS=0
MANAGEMENT_REQUESTS=0
DIRECT_REQUESTS=0
PROPAGATION=()

prepare
section "fleet: $INSTANCES instances, HAProxy on 127.0.0.1:$LB_PORT"
for ((i = 0; i < INSTANCES; i++)); do
	start_instance "$i"
done
start_haproxy
for ((i = 0; i < INSTANCES; i++)); do
	wait_up "$i"
done
phase_steady
phase_rolling
phase_outage
phase_writes
summary
