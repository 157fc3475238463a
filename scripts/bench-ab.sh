#!/usr/bin/env bash
# scripts/bench-ab.sh A_BIN B_BIN [--quick]: GET /fragment on two builds of agentcard,
# alternated, to tell whether a change costs the hot path more than the run-to-run noise.
#
# 1. Recreates database `agentcard_bench_ab` on the PostgreSQL server scripts/lib/postgres.sh
#    finds, migrates it with B_BIN (the newer build: an older one runs on a newer schema, as
#    in an upgrade, the migrations being expand-only) and loads scripts/bench-data.sql (as
#    scripts/bench-load.sh).
# 2. Starts both builds on loopback, A on 127.0.0.1:18091 and B on 127.0.0.1:18092, WORKERS
#    threads each, both running throughout (the one not measured is idle).
# 3. Runs wrk (in a session of its own, see scripts/lib/bench.sh) on /fragment, rotating over
#    1000 page URLs (scripts/bench/fragment.lua), against A, B, A, B, … for ROUNDS rounds.
# 4. Prints each run's req/s and p99, the medians per build, and the ratios B/A of the medians
#    and paired within rounds (the machine's drift over the run cancels out there); and, as
#    the noise to compare them with, the spread of A's own runs (max/min).
#
# Build the two binaries first, e.g. `git worktree add ../before REV` and `cargo build --release`
# in each (BUILD_PROFILE as in the other benchmarks is not used: the binaries are given).
# wrk is installed from Debian's packages when absent (scripts/lib/apt.sh). No traffic leaves
# loopback. Everything started here is stopped on exit.
#
# Knobs (environment): ROUNDS (3), DURATION seconds per run (10; 3 with --quick or QUICK=1),
# CONNECTIONS (64), THREADS wrk threads (2), WORKERS server threads (nproc), DATABASE_URL
# (see scripts/lib/postgres.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=bench-ab
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

readonly DATABASE=agentcard_bench_ab
# The delivery key the data set stores (its SHA-256); not a secret, loopback only.
readonly BENCH_KEY=svc_live_0be4c11a7d5e9f3b2a6c8d0e1f4b7a9c3d5e8f20
readonly PORT_A=18091 PORT_B=18092
readonly FRAGMENT_LUA=scripts/bench/fragment.lua

[[ $# -ge 2 && -x $1 && -x $2 ]] || die "usage: scripts/bench-ab.sh A_BIN B_BIN [--quick] (two built agentcard binaries)"
readonly A_BIN=$1 B_BIN=$2
shift 2
bench_args scripts/bench-ab.sh "$@"

bench_knobs
WORKERS=$(knob WORKERS "${WORKERS:-$(nproc)}" 256)

bench_server_env

bench_workdir agentcard-ab

prepare() {
	section "Database"
	command -v wrk >/dev/null || agentcard_apt_install wrk || die "the benchmark needs wrk"
	command -v setsid >/dev/null || die "the benchmark needs setsid (util-linux)"
	fresh_database "$DATABASE"
	DATABASE_URL=$BENCH_URL "$B_BIN" migrate >/dev/null
	psql_bench -v bench_key="$BENCH_KEY" -f scripts/bench-data.sql
	bench_ids
	echo "A: $A_BIN"
	echo "B: $B_BIN"
}

# start NAME BIN PORT: the build BIN serving on PORT; sets PID_NAME.
start() {
	local name=$1 bin=$2 port=$3 log=$WORKDIR/$1.log pid
	if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
		die "something already answers on 127.0.0.1:$port"
	fi
	DATABASE_URL=$BENCH_URL AGENTCARD_LISTEN=127.0.0.1:$port AGENTCARD_REFRESH_MS=60000 \
		AGENTCARD_WORKERS=$WORKERS "$bin" serve >"$log" 2>&1 &
	pid=$!
	STARTED_PIDS+=("$pid")
	wait_http "$name" "$pid" "http://127.0.0.1:$port/ready" "$log"
	printf -v "PID_$name" '%s' "$pid"
}

# One line per run, tab-separated: 1 build (A, B), 2 round, 3 req/s, 4 p99 µs, 5 non-2xx.
RESULTS=$WORKDIR/results.tsv

wrk_fragment() {
	local port=$1 seconds=$2 output=$3
	BENCH_PARTNER_ID=$PARTNER_ID BENCH_FRAGMENT_ID=$FRAGMENT_ID BENCH_API_KEY=$BENCH_KEY \
		wrk_session "$seconds" "$output" "agentcard /fragment" -t "$THREADS" -c "$CONNECTIONS" \
		-d "${seconds}s" --latency --timeout 2s -s "$FRAGMENT_LUA" "http://127.0.0.1:$port"
}

# measure BUILD PORT ROUND: one wrk run against BUILD.
measure() {
	local build=$1 port=$2 round=$3 output=$WORKDIR/wrk-$1-$3.txt requests rps p99 non2xx
	wrk_fragment "$port" "$DURATION" "$output"
	read -r requests rps _ p99 non2xx _ <<<"$(parse_wrk "$output")"
	((requests > 0)) || die "no request completed (see $output)"
	printf '%s\t%s\t%s\t%s\t%s\n' "$build" "$round" "$rps" "$p99" "$non2xx" >>"$RESULTS"
	printf 'round %d/%d  %s %10.0f req/s  p99 %8.3f ms  non-2xx %d\n' "$round" "$ROUNDS" \
		"$build" "$rps" "$(ms "$p99")" "$non2xx"
	# The report's flush of the run's requests, out of the next run.
	sleep 2
}

run_rounds() {
	local round
	section "Warm-up (${WARMUP} s each, not measured)"
	wrk_fragment "$PORT_A" "$WARMUP" "$WORKDIR/warmup-a.txt"
	wrk_fragment "$PORT_B" "$WARMUP" "$WORKDIR/warmup-b.txt"
	sleep 2
	section "Runs: $ROUNDS rounds of A then B, wrk $THREADS threads, $CONNECTIONS connections, ${DURATION} s each"
	for ((round = 1; round <= ROUNDS; round++)); do
		measure A "$PORT_A" "$round"
		measure B "$PORT_B" "$round"
	done
}

# spread BUILD COLUMN: the largest of BUILD's runs over its smallest.
spread() {
	awk -F '\t' -v b="$1" -v c="$2" '$1 == b { if (!n++ || $c > max) max = $c; if (n == 1 || $c < min) min = $c }
		END { if (min > 0) printf "%.2f", max / min; else print "n/a" }' "$RESULTS"
}

report() {
	local a_rps b_rps a_p99 b_p99
	section "Results: median over $ROUNDS rounds"
	a_rps=$(median A 3) b_rps=$(median B 3) a_p99=$(median A 4) b_p99=$(median B 4)
	printf '%-6s %12s %10s\n' build "req/s" "p99 ms"
	printf '%-6s %12.0f %10.3f\n' A "$a_rps" "$(ms "$a_p99")" B "$b_rps" "$(ms "$b_p99")"
	echo
	echo "B/A of the medians: req/s $(ratio "$b_rps" "$a_rps"), p99 $(ratio "$b_p99" "$a_p99")"
	echo "B/A paired within rounds: req/s $(paired_ratio B A 3), p99 $(paired_ratio B A 4)"
	echo "the noise, max/min of each build's own runs: A req/s $(spread A 3), p99 $(spread A 4); B req/s $(spread B 3), p99 $(spread B 4)"
	machine
}

main() {
	local start=$SECONDS
	machine
	prepare
	section "Servers (loopback, $WORKERS worker threads each)"
	start A "$A_BIN" "$PORT_A"
	start B "$B_BIN" "$PORT_B"
	run_rounds
	report
	echo
	echo "total time: $((SECONDS - start)) s"
}

main
