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
STEADY=$(knob STEADY "${STEADY:-$((QUICK == 1 ? 5 : 10))}" 600)
OUTAGE=$(knob OUTAGE "${OUTAGE:-$((QUICK == 1 ? 10 : 30))}" 600)
WRITES=$(knob WRITES "${WRITES:-6}" 50)

# shellcheck source=scripts/lib/fleet.sh
source scripts/lib/fleet.sh
fleet_setup agentcard-fleet

# ---------------------------------------------------------------- phases

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
		# The answer read whole before it is matched: a `grep -q` gone at its match would kill
		# curl (SIGPIPE) under pipefail.
		[[ "$(curl -fsS "http://127.0.0.1:$(instance_port "$i")/ready")" == *'"database":"up"'* ]] || return 1
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
	ensure_fleet_tools
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

summary() {
	local answered counted
	section "stop: every instance by SIGTERM"
	answered=$(($(backend_responses) - MANAGEMENT_REQUESTS + DIRECT_REQUESTS))
	for ((i = 0; i < INSTANCES; i++)); do
		stop_instance "$i"
	done
	counted=$(report_total)
	section "fleet of $INSTANCES behind HAProxy, $CONNECTIONS connections, drain $DRAIN_MS ms"
	machine
	print_phases
	echo "propagation of a write to every instance (ms): ${PROPAGATION[*]}"
	echo "/fragment requests answered by the instances: $answered (through HAProxy, and $DIRECT_REQUESTS direct)"
	echo "counted by the report: $counted"
	echo "instances that exited with a status other than 0: $BAD_EXITS"
}

MANAGEMENT_REQUESTS=0
DIRECT_REQUESTS=0
PROPAGATION=()

prepare
section "fleet: $INSTANCES instances, HAProxy on 127.0.0.1:$LB_PORT"
start_fleet
phase_steady
phase_rolling
phase_outage
phase_writes
summary
