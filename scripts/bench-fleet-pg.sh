#!/usr/bin/env bash
# scripts/bench-fleet-pg.sh: what the report's flushes of a fleet cost one PostgreSQL.
#
# 1. Recreates database `agentcard_fleet` on the PostgreSQL server scripts/lib/postgres.sh
#    finds, builds agentcard with the bench-only feature `bench-fleet` (profile bench-lto;
#    BUILD_PROFILE=release for the default release build) and migrates.
# 2. For each count N of INSTANCES, one run: N processes `agentcard bench-flush`, each an
#    instance's report alone (no HTTP): RATE requests a second of the load benchmark's mix
#    (scripts/bench/fragment.lua: 1000 pages of 1000 sites, four agents, one organisation and
#    key) recorded through the service's own counters and flusher, with their flush period
#    (AGENTCARD_REPORT_FLUSH_MS: the service's default unless REPORT_FLUSH_MS is set). All N
#    add to the same counters, as instances behind one balancer do.
# 3. Measures a window of DURATION seconds, from 5 s after the instances' start (their
#    connections, first flushes) to before their last flush: PostgreSQL's CPU time (utime+stime
#    of the postmaster and its children, and of those it reaped, less this script's own
#    session: scripts/lib/pg_cpu.sh), and the part of the bench database's sessions.
# 4. Prints per run: the requests recorded and counted once the instances have stopped (the
#    report's sum, target 100 %), PostgreSQL's CPU time per instance and second, per request at
#    RATE, and how many such instances one PostgreSQL core holds (1 s over one instance's
#    second). Page counters are flushed every ten flush periods: a window of DURATION holds
#    DURATION / (10 periods) of them, so a window shorter than ten periods may hold none.
#
# The instances run on this machine too: on a small one they compete with PostgreSQL for the
# cores, which may delay flushes, not change what each costs.
#
# Knobs (environment): INSTANCES counts of instances, one run each ("1 4"), RATE requests a
# second per instance (75000), DURATION seconds measured per run (60; 10 with --quick or
# QUICK=1), REPORT_FLUSH_MS, BUILD_PROFILE, DATABASE_URL (see scripts/lib/postgres.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=bench-fleet-pg
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh
# shellcheck source=scripts/lib/pg_cpu.sh
source scripts/lib/pg_cpu.sh

readonly DATABASE=agentcard_fleet

bench_args scripts/bench-fleet-pg.sh "$@"

QUICK=${QUICK:-0}
DURATION=$(knob DURATION "${DURATION:-$([[ $QUICK == 1 ]] && echo 10 || echo 60)}" 600)
# Seconds before the window (the instances connect and flush) and after it (their last flush
# falls outside).
readonly WARMUP=5 TAIL=3
RATE=$(knob RATE "${RATE:-75000}" 10000000)
INSTANCES=${INSTANCES:-1 4}
for count in $INSTANCES; do
	knob INSTANCES "$count" 64 >/dev/null
done
FLUSH_MS=${REPORT_FLUSH_MS:-}
[[ -z $FLUSH_MS ]] || FLUSH_MS=$(knob REPORT_FLUSH_MS "$FLUSH_MS" 60000)

bench_server_env
[[ -z $FLUSH_MS ]] || export AGENTCARD_REPORT_FLUSH_MS=$FLUSH_MS

bench_workdir agentcard-fleet

prepare() {
	section "Database and build"
	fresh_database "$DATABASE"
	build_profile --bin agentcard --features bench-fleet
	DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" migrate >/dev/null
	psql_bench -c CHECKPOINT 2>/dev/null || true
}

# run N: one run of N instances; prints its line and appends it to RESULTS: N, recorded,
# counted, PostgreSQL ticks in the window, of which the bench database's sessions'.
run() {
	local n=$1 i pid before_count before_pg before_db pg db counted recorded=0 out
	local -a pids=()
	before_count=$(report_count)
	for ((i = 0; i < n; i++)); do
		DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" bench-flush --rate "$RATE" \
			--seconds $((WARMUP + DURATION + TAIL)) \
			>"$WORKDIR/instance-$n-$i.json" 2>"$WORKDIR/instance-$n-$i.log" &
		pids+=("$!")
		STARTED_PIDS+=("$!")
	done
	# The window: after the instances' start and first flushes, before their last.
	sleep "$WARMUP"
	before_pg=$(pg_cpu_ticks)
	before_db=$(pg_database_ticks)
	sleep "$DURATION"
	pg=$(($(pg_cpu_ticks) - before_pg))
	db=$(ticks_since "$before_db" "$(pg_database_ticks)")
	for ((i = 0; i < n; i++)); do
		pid=${pids[$i]}
		wait "$pid" || die "instance $i of $n failed: $(tail -n 5 "$WORKDIR/instance-$n-$i.log")"
		forget "$pid"
		out=$(<"$WORKDIR/instance-$n-$i.json")
		[[ $out =~ \"recorded\":([0-9]+) ]] || die "instance $i of $n printed: $out"
		recorded=$((recorded + BASH_REMATCH[1]))
	done
	counted=$(($(report_count) - before_count))
	printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$recorded" "$counted" "$pg" "$db" >>"$RESULTS"
	awk -v n="$n" -v r="$recorded" -v c="$counted" -v pg="$pg" -v db="$db" \
		-v d="$DURATION" -v rate="$RATE" -v hz="$CLK_TCK" 'BEGIN {
		ms = pg / hz * 1000 / (n * d); dbms = db / hz * 1000 / (n * d)
		printf "%2d instance(s): recorded %d, counted %d (%.2f %%)\n", n, r, c, 100 * c / r
		printf "                PostgreSQL CPU %d ticks in %d s: %.2f ms per instance and second (the bench database'"'"'s sessions %.2f),", pg, d, ms, dbms
		printf " %.3f µs per request at %d req/s; one PostgreSQL core holds %.0f such instances\n", ms * 1000 / rate, rate, (ms > 0 ? 1000 / ms : 0) }'
}

main() {
	local count
	machine
	prepare
	start_pg_session
	[[ -n $PG_POSTMASTER ]] || die "PostgreSQL's processes are not on this machine: nothing to measure"
	RESULTS=$WORKDIR/results.tsv
	local period="the service's default"
	[[ -z $FLUSH_MS ]] || period="$FLUSH_MS ms"
	section "Runs: $RATE requests a second per instance for $DURATION s, flush period $period"
	for count in $INSTANCES; do
		run "$count"
	done
	echo
	echo "PostgreSQL CPU: the whole server's over each run's window of $DURATION s, divided by its" \
		"instances; one tick is 1/$CLK_TCK s."
	if (($(pg_other_sessions) > 0 || PG_OTHER_SESSIONS_START > 0)); then
		echo "warning: sessions on other databases of this server: their work counts in PostgreSQL's CPU time;" \
			"the bench database's sessions are this benchmark's alone"
	fi
}

main
