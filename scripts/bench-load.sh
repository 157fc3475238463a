#!/usr/bin/env bash
# scripts/bench-load.sh [--quick]: load benchmark of GET /fragment against two references.
#
# 1. Recreates database `agentcard_bench` on the PostgreSQL server scripts/lib/postgres.sh
#    finds, builds the binaries (profile bench-lto; BUILD_PROFILE=release for the default
#    release build's figures), migrates, and loads scripts/bench-data.sql (10
#    organisations, 10 000 sites, 1 000 000 fragments, 200 000 rules, 10 000 cards, keys).
# 2. Starts three servers on loopback, each with WORKERS threads (default: nproc), NOT
#    pinned (servers and wrk share every CPU), all answering the same ~600-byte card
#    (scripts/bench/card.html):
#      A  agentcard serve, GET /fragment       127.0.0.1:18080
#      B  examples/hello_minihttp.rs           127.0.0.1:18081  (bare may_minihttp, HashMap)
#      C  nginx, static file                   127.0.0.1:18082
# 3. Runs wrk (in a session of its own: see wrk_target) over keep-alive against A B C A B C …
#    for ROUNDS rounds. Every target gets the same requests, GET /fragment rotating over 1000
#    page URLs (scripts/bench/fragment.lua); B and C ignore the query and answer the card, so
#    the client's work and the request bytes are the same for all three. After each run of A,
#    the wait for its report to flush the run's requests to PostgreSQL (see wait_flush).
# 4. Prints per target the median over rounds of req/s, p50, p99 and the server's CPU time
#    per request (utime+stime of its process(es), from /proc), the ratios agentcard/hello
#    and agentcard/nginx (of the medians, and the median of each round's own ratio), and
#    the machine.
# 5. Unless SKIP_WRITES=1: ROUNDS more rounds against A, alternating without and with a
#    management token writing at its rate limit (one PUT a second), and the median p99 of each.
# 6. For every run against agentcard (3 and 5), and summed up per phase at the end: the
#    requests wrk made; the requests agentcard's report counted in the run's window (the sum
#    of `requests` in report_minutes and report_hours, all organisations, before the run and
#    once the count has stopped growing for 2 flush periods after it, at most 30 s); their
#    ratio (target: 100 %); and PostgreSQL's CPU time per request (utime+stime of the
#    postmaster and its children, and of the children it reaped, less this script's own
#    session; target: under 0.1 µs), with the part of the bench database's own processes.
#
# wrk and nginx are installed from Debian's packages with apt-get when absent (as root or
# with passwordless sudo: scripts/lib/apt.sh). Everything started here is stopped on exit;
# agentcard by SIGTERM at the end, its exit status shown.
#
# Knobs (environment): ROUNDS (3), DURATION seconds per run (10; 3 with --quick or
# QUICK=1), CONNECTIONS (64), THREADS wrk threads (2), WORKERS server threads (nproc),
# REPORT_FLUSH_MS agentcard's report flush period (5000, the service's default),
# SKIP_WRITES=1, DATABASE_URL (see scripts/lib/postgres.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=bench-load
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh
# shellcheck source=scripts/lib/pg_cpu.sh
source scripts/lib/pg_cpu.sh

readonly DATABASE=agentcard_bench
# The delivery key the data set stores (its SHA-256); not a secret, loopback only.
readonly BENCH_KEY=svc_live_0be4c11a7d5e9f3b2a6c8d0e1f4b7a9c3d5e8f20
readonly PORT_AGENTCARD=18080 PORT_HELLO=18081 PORT_NGINX=18082
readonly CARD_FILE=scripts/bench/card.html
readonly FRAGMENT_LUA=scripts/bench/fragment.lua
readonly WRITES_DOMAIN=bench-writes.example

bench_args scripts/bench-load.sh "$@"

bench_knobs
WORKERS=$(knob WORKERS "${WORKERS:-$(nproc)}" 256)
REPORT_FLUSH_MS=$(knob REPORT_FLUSH_MS "${REPORT_FLUSH_MS:-5000}" 60000)
SKIP_WRITES=${SKIP_WRITES:-0}

bench_server_env

# ---------------------------------------------------------------- processes and clean-up

bench_workdir agentcard-bench

# ---------------------------------------------------------------- tools

ensure_tools() {
	ensure_bench_tools
	# Read whole, then matched: a `grep -q` gone at its match would kill curl (SIGPIPE).
	[[ "$(curl --help all)" == *--rate* ]] || die "curl 7.84 or newer is needed (the writes phase paces with --rate)"
}

# ---------------------------------------------------------------- database and build

prepare_database() {
	section "Database and build"
	fresh_database "$DATABASE"
	build_profile --bin agentcard --example hello_minihttp
	HELLO_BIN=$TARGET_DIR/examples/hello_minihttp

	DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" migrate >/dev/null
}

load_data() {
	section "Data set (scripts/bench-data.sql)"
	local start=$EPOCHREALTIME
	psql_bench -v bench_key="$BENCH_KEY" -f scripts/bench-data.sql
	LOAD_SECONDS=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	psql_bench -At -F ' ' -c "SELECT (SELECT count(*) FROM orgs), (SELECT count(*) FROM sites),
		(SELECT count(*) FROM fragments), (SELECT count(*) FROM routes),
		(SELECT count(*) FROM cards), (SELECT count(*) FROM card_eligibility),
		(SELECT count(*) FROM delivery_keys)" |
		awk '{ printf "loaded: %s orgs, %s sites, %s fragments, %s rules, %s cards, %s eligibility rows, %s delivery keys\n", $1, $2, $3, $4, $5, $6, $7 }'
	echo "load time: $LOAD_SECONDS s"
	# The load's pages, written now rather than by the checkpointer during the runs, where they
	# would count in PostgreSQL's CPU time per request.
	if ! psql_bench -c CHECKPOINT 2>/dev/null; then
		echo "note: CHECKPOINT refused (not superuser nor pg_checkpoint): the checkpointer may" \
			"write the load's pages during the runs, in PostgreSQL's CPU time"
	fi
	bench_ids
	echo "api_key:     $BENCH_KEY"
	echo "partner_id:  $PARTNER_ID"
	echo "fragment_id: $FRAGMENT_ID"
}

# ---------------------------------------------------------------- servers

start_agentcard() {
	local log=$WORKDIR/agentcard.log
	DATABASE_URL=$BENCH_URL AGENTCARD_LISTEN=127.0.0.1:$PORT_AGENTCARD AGENTCARD_REFRESH_MS=60000 \
		AGENTCARD_WORKERS=$WORKERS AGENTCARD_REPORT_FLUSH_MS=$REPORT_FLUSH_MS \
		"$AGENTCARD_BIN" serve >"$log" 2>&1 &
	PID_AGENTCARD=$!
	STARTED_PIDS+=("$PID_AGENTCARD")
	wait_http agentcard "$PID_AGENTCARD" "http://127.0.0.1:$PORT_AGENTCARD/ready" "$log"
}

start_hello() {
	local log=$WORKDIR/hello.log
	"$HELLO_BIN" "127.0.0.1:$PORT_HELLO" "$WORKERS" >"$log" 2>&1 &
	PID_HELLO=$!
	STARTED_PIDS+=("$PID_HELLO")
	wait_http hello_minihttp "$PID_HELLO" "http://127.0.0.1:$PORT_HELLO/card.html" "$log"
}

start_nginx() {
	local dir=$WORKDIR/nginx
	mkdir -p "$dir/www"
	chmod 755 "$dir" "$dir/www"
	cp "$CARD_FILE" "$dir/www/card.html"
	chmod 644 "$dir/www/card.html"
	nginx_conf "$dir" "$WORKERS" <<-EOF
		types { text/html html; }
		default_type text/html;
		charset utf-8;
		open_file_cache max=16 inactive=60s;
		open_file_cache_valid 60s;
		server {
		    listen 127.0.0.1:$PORT_NGINX;
		    root $dir/www;
		    # The benchmark's /fragment requests get the card file, whatever their query.
		    location = /fragment { try_files /card.html =404; }
		}
	EOF
	start_nginx_in PID_NGINX "$dir" nginx "http://127.0.0.1:$PORT_NGINX/card.html"
}

# check_target NAME URL: one request, status and body size shown.
check_target() {
	local name=$1 url=$2 answer
	answer=$(curl -sS -o /dev/null --max-time 5 -w '%{http_code} %{size_download}' "$url")
	printf '%-22s HTTP %s, %s bytes\n' "$name" "${answer% *}" "${answer#* }"
	[[ ${answer% *} == 200 ]]
}

start_servers() {
	section "Servers (loopback, $WORKERS worker threads each, not pinned)"
	start_agentcard
	start_hello
	start_nginx
	echo "card: $CARD_FILE, $(wc -c <"$CARD_FILE") bytes"
	FRAGMENT_URL="http://127.0.0.1:$PORT_AGENTCARD/fragment?partner_id=$PARTNER_ID&fragment_id=$FRAGMENT_ID"
	FRAGMENT_URL+="&lang=fr&api_key=$BENCH_KEY&page_url=https%3A%2F%2Fsite1.example%2Fnews%2F1%2Farticle"
	if ! check_target "A agentcard /fragment" "$FRAGMENT_URL"; then
		echo "  warning: /fragment does not answer 200: A's numbers do not measure the endpoint"
	fi
	check_target "B hello_minihttp" "${FRAGMENT_URL/$PORT_AGENTCARD/$PORT_HELLO}" ||
		die "hello_minihttp does not serve the card"
	check_target "C nginx" "${FRAGMENT_URL/$PORT_AGENTCARD/$PORT_NGINX}" || die "nginx does not serve the card"
}

# ---------------------------------------------------------------- the report's window (scripts/lib/pg_cpu.sh)

now_ms() {
	local t=${EPOCHREALTIME//[!0-9]/}
	echo $((10#$t / 1000))
}

# wait_flush: after a run against agentcard, waits for its report to have written the run's
# requests: polls report_count until it has not grown for two flush periods, up to 30 s (or
# 10 periods). Sets FLUSHED, the count then, and FLUSH_WAIT, the seconds waited. Waiting also
# keeps the flush out of the next run, whichever target it measures, and counts the flusher's
# CPU time for agentcard's own requests.
wait_flush() {
	local start now changed count last poll limit
	poll=$((REPORT_FLUSH_MS / 4 < 50 ? 50 : REPORT_FLUSH_MS / 4))
	limit=$((REPORT_FLUSH_MS * 10 > 30000 ? REPORT_FLUSH_MS * 10 : 30000))
	start=$(now_ms)
	changed=$start
	last=$(report_count)
	while :; do
		sleep "$((poll / 1000)).$(printf '%03d' $((poll % 1000)))"
		count=$(report_count)
		now=$(now_ms)
		if ((count != last)); then
			last=$count
			changed=$now
		elif ((now - changed >= 2 * REPORT_FLUSH_MS)); then
			break
		fi
		if ((now - start >= limit)); then
			echo "warning: agentcard's report count still grew $((limit / 1000)) s after the run: the next window may hold some of this one's requests" >&2
			break
		fi
	done
	FLUSHED=$last
	FLUSH_WAIT=$(awk -v ms=$((now - start)) 'BEGIN { printf "%.1f", ms / 1000 }')
}

# window_begin: before a run against agentcard, the report's count and PostgreSQL's CPU time.
window_begin() {
	WINDOW_COUNT=$(report_count)
	WINDOW_PG="" WINDOW_DB=""
	if [[ -n $PG_POSTMASTER ]]; then
		WINDOW_PG=$(pg_cpu_ticks)
		WINDOW_DB=$(pg_database_ticks)
	fi
}

# window_end REQUESTS: after the run (and wait_flush), with the requests wrk made: sets
# COUNTED, COUNTED_PCT, PG_TICKS, PG_US (µs per request), PG_DB_TICKS and PG_DB_US (the bench
# database's processes only); "-" for what is not measured.
window_end() {
	local requests=$1
	COUNTED=$((FLUSHED - WINDOW_COUNT))
	COUNTED_PCT=$(awk -v c="$COUNTED" -v n="$requests" 'BEGIN { if (n > 0) printf "%.2f", 100 * c / n; else print "-" }')
	PG_TICKS=- PG_US=- PG_DB_TICKS=- PG_DB_US=-
	if [[ -n $WINDOW_PG ]]; then
		PG_TICKS=$(($(pg_cpu_ticks) - WINDOW_PG))
		PG_DB_TICKS=$(ticks_since "$WINDOW_DB" "$(pg_database_ticks)")
		PG_US=$(per_request "$PG_TICKS" "$requests")
		PG_DB_US=$(per_request "$PG_DB_TICKS" "$requests")
	fi
}

# print_window REQUESTS NON2XX ERRORS: the line under an agentcard run.
print_window() {
	printf '           wrk made %d requests (non-2xx %d, socket errors %d); the report counted %d (%s %%),' \
		"$1" "$2" "$3" "$COUNTED" "$COUNTED_PCT"
	printf ' read %s s after the run\n           PostgreSQL CPU %s µs/req (%s ticks), of which the bench database'"'"'s sessions %s µs/req (%s ticks)\n' \
		"$FLUSH_WAIT" "$PG_US" "$PG_TICKS" "$PG_DB_US" "$PG_DB_TICKS"
}

# ---------------------------------------------------------------- measuring

# Processes whose CPU time counts for a target: nginx's master and workers.
target_pids() {
	case $1 in
	A) echo "$PID_AGENTCARD" ;;
	B) echo "$PID_HELLO" ;;
	C) echo "$PID_NGINX $(pgrep -P "$PID_NGINX" | tr '\n' ' ')" ;;
	esac
}

target_name() {
	case $1 in
	A) echo "A agentcard /fragment" ;;
	B) echo "B may_minihttp hello" ;;
	C) echo "C nginx static" ;;
	esac
}

# wrk_target TARGET SECONDS OUTPUT: one wrk run against TARGET, output kept in OUTPUT. After a
# run against agentcard, the caller waits for its report's flush (wait_flush).
wrk_target() {
	local target=$1 seconds=$2 output=$3
	local -a args=(-t "$THREADS" -c "$CONNECTIONS" -d "${seconds}s" --latency --timeout 2s)
	# Every target gets the same requests from the same script: the client's work and the
	# request bytes, which share the cores with the servers, are the same for all three.
	args+=(-s "$FRAGMENT_LUA")
	case $target in
	A) args+=("http://127.0.0.1:$PORT_AGENTCARD") ;;
	B) args+=("http://127.0.0.1:$PORT_HELLO") ;;
	C) args+=("http://127.0.0.1:$PORT_NGINX") ;;
	esac
	BENCH_PARTNER_ID=$PARTNER_ID BENCH_FRAGMENT_ID=$FRAGMENT_ID BENCH_API_KEY=$BENCH_KEY \
		wrk_session "$seconds" "$output" "$(target_name "$target")" "${args[@]}"
}

# One line per run, tab-separated: 1 target (A B C; N W: A without and with writes), 2 round,
# 3 req/s, 4 p50 µs, 5 p99 µs, 6 server CPU µs/req, 7 non-2xx, 8 socket errors, 9 bytes/resp,
# 10 requests wrk made; for agentcard's runs (else -): 11 requests the report counted, 12 their
# percentage of 10, 13 PostgreSQL CPU µs/req, 14 its ticks, 15 16 the same for the bench
# database's processes only (13 to 16: - when not measured).
RESULTS=$WORKDIR/results.tsv

# measure TARGET ROUND: one measured run; appends a line to RESULTS and prints it.
measure() {
	local target=$1 round=$2 output=$WORKDIR/wrk-$1-$2.txt before after
	local requests rps p50 p99 non2xx errors bytes_read cpu size
	local -a pids
	read -r -a pids <<<"$(target_pids "$target")"
	before=$(cpu_ticks "${pids[@]}")
	[[ $target == A ]] && window_begin
	wrk_target "$target" "$DURATION" "$output"
	[[ $target == A ]] && wait_flush
	after=$(cpu_ticks "${pids[@]}")
	read -r requests rps p50 p99 non2xx errors bytes_read <<<"$(parse_wrk "$output")"
	((requests > 0)) || die "no request completed against $(target_name "$target") (see $output)"
	cpu=$(per_request_us $((after - before)) "$requests")
	size=$(awk -v b="$bytes_read" -v n="$requests" 'BEGIN { printf "%.0f", b / n }')
	COUNTED=- COUNTED_PCT=- PG_US=- PG_TICKS=- PG_DB_US=- PG_DB_TICKS=-
	[[ $target == A ]] && window_end "$requests"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$round" "$rps" "$p50" "$p99" "$cpu" \
		"$non2xx" "$errors" "$size" "$requests" "$COUNTED" "$COUNTED_PCT" "$PG_US" "$PG_TICKS" "$PG_DB_US" "$PG_DB_TICKS" >>"$RESULTS"
	printf 'round %d/%d  %-22s %10.0f req/s  p50 %8.3f ms  p99 %8.3f ms  CPU %7.2f µs/req  %4d B/resp  non-2xx %d  socket errors %d\n' \
		"$round" "$ROUNDS" "$(target_name "$target")" "$rps" "$(ms "$p50")" "$(ms "$p99")" "$cpu" "$size" "$non2xx" "$errors"
	if [[ $target == A ]]; then
		print_window "$requests" "$non2xx" "$errors"
	fi
}

run_rounds() {
	local round target
	section "Warm-up (${WARMUP} s per target, not measured)"
	for target in A B C; do
		wrk_target "$target" "$WARMUP" "$WORKDIR/warmup-$target.txt"
		if [[ $target == A ]]; then
			wait_flush
			echo "$(target_name "$target"): done (report flushed, read $FLUSH_WAIT s after the run)"
		else
			echo "$(target_name "$target"): done"
		fi
	done
	section "Runs: $ROUNDS rounds of A B C, wrk $THREADS threads, $CONNECTIONS connections, keep-alive, ${DURATION} s each"
	for ((round = 1; round <= ROUNDS; round++)); do
		for target in A B C; do
			measure "$target" "$round"
		done
	done
}

report() {
	local target a_rps a_cpu non2xx
	section "Results: median over $ROUNDS rounds (servers not pinned, $WORKERS worker threads each)"
	printf '%-22s %12s %10s %10s %14s %12s %10s\n' target "req/s" "p50 ms" "p99 ms" "CPU µs/req" "bytes/resp" "non-2xx"
	for target in A B C; do
		printf '%-22s %12.0f %10.3f %10.3f %14.2f %12.0f %10.0f\n' "$(target_name "$target")" \
			"$(median "$target" 3)" "$(ms "$(median "$target" 4)")" "$(ms "$(median "$target" 5)")" \
			"$(median "$target" 6)" "$(median "$target" 9)" "$(median "$target" 7)"
	done
	a_rps=$(median A 3)
	a_cpu=$(median A 6)
	echo
	echo "agentcard / hello_minihttp:  req/s $(ratio "$a_rps" "$(median B 3)")   CPU per request $(ratio "$a_cpu" "$(median B 6)")"
	echo "agentcard / nginx:           req/s $(ratio "$a_rps" "$(median C 3)")   CPU per request $(ratio "$a_cpu" "$(median C 6)")"
	echo "paired within rounds (median of each round's own ratio): req/s over hello_minihttp" \
		"$(paired_ratio A B 3), over nginx $(paired_ratio A C 3)"
	non2xx=$(median A 7)
	if awk -v n="$non2xx" 'BEGIN { exit !(n > 0) }'; then
		echo "warning: agentcard answered non-2xx (median $non2xx per run): its numbers do not measure /fragment"
	fi
	echo "CPU time: the server process(es) only (nginx: master and workers; agentcard: until its report" \
		"has flushed the run), not wrk nor PostgreSQL (see the report section at the end)."
	machine
	echo "data load: $LOAD_SECONDS s"
}

# ---------------------------------------------------------------- writes phase

json_string() {
	sed -n "s/^ *\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" | awk 'NR == 1'
}

# put PATH BODY: one management write with the bench token; prints the status.
put() {
	curl -sS -o /dev/null --max-time 2 -w '%{http_code}\n' -X PUT \
		-H "Authorization: Bearer $WRITES_TOKEN" -H 'Content-Type: application/json' \
		--data "$2" "http://127.0.0.1:$PORT_AGENTCARD$1" || true
}

# writer COUNT OUTPUT: COUNT PUTs, one a second (the write limit, 60 a minute), each status
# and time in seconds appended to OUTPUT. One curl process on one keep-alive connection, paced by --rate: a
# process started per write (curl, sleep) costs the saturated machine more than the write, and
# moved /fragment's p99 as much as a GET /health started the same way.
writer() {
	local count=$1 output=$2 config=$WORKDIR/writes.curl i
	: >"$config"
	for ((i = 0; i < count; i++)); do
		printf 'url = "http://127.0.0.1:%s/v1/sites/%s/fragments/%%2Fw"\noutput = "/dev/null"\n' \
			"$PORT_AGENTCARD" "$WRITES_DOMAIN" >>"$config"
	done
	curl -sS --rate 1/s --max-time "$((count + 30))" -K "$config" -X PUT \
		-H "Authorization: Bearer $WRITES_TOKEN" -H 'Content-Type: application/json' \
		--data '{"name":"w"}' -w '%{http_code} %{time_total}\n' >>"$output" || true
}

# writes_round ROUND LABEL: one wrk run against A, with a writer at the rate limit when LABEL
# is W (N: none); appends the run to RESULTS under LABEL and prints it.
writes_round() {
	local round=$1 label=$2 output=$WORKDIR/wrk-writes-$1-$2.txt writer_pid=""
	local requests rps p50 p99 non2xx errors
	window_begin
	if [[ $label == W ]]; then
		writer "$DURATION" "$WORKDIR/writes.txt" &
		writer_pid=$!
		STARTED_PIDS+=("$writer_pid")
	fi
	wrk_target A "$DURATION" "$output"
	if [[ -n $writer_pid ]]; then
		wait "$writer_pid" || true
		forget "$writer_pid"
	fi
	wait_flush
	read -r requests rps p50 p99 non2xx errors _ <<<"$(parse_wrk "$output")"
	((requests > 0)) || die "no request completed against $(target_name A) (see $output)"
	window_end "$requests"
	printf '%s\t%s\t%s\t%s\t%s\t0\t%s\t%s\t0\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$round" "$rps" "$p50" "$p99" "$non2xx" "$errors" \
		"$requests" "$COUNTED" "$COUNTED_PCT" "$PG_US" "$PG_TICKS" "$PG_DB_US" "$PG_DB_TICKS" >>"$RESULTS"
	printf 'round %d/%d  A %-14s %10.0f req/s  p50 %8.3f ms  p99 %8.3f ms  non-2xx %d  socket errors %d\n' \
		"$round" "$ROUNDS" "$([[ $label == W ]] && echo "with writes" || echo "without")" "$rps" "$(ms "$p50")" "$(ms "$p99")" "$non2xx" "$errors"
	print_window "$requests" "$non2xx" "$errors"
}

# Rounds of A without and with writes, alternating like the targets above, so that drift
# hits both alike; compares the medians.
writes_phase() {
	local org token_json round
	section "Writes: /fragment p99 while a token writes at its rate limit ($ROUNDS rounds, alternating)"
	org=$(DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" admin org create --name "bench writes" | json_string id)
	token_json=$(DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" admin token create --org "$org" --name bench-writes)
	WRITES_TOKEN=$(json_string token <<<"$token_json")
	[[ -n $org && -n $WRITES_TOKEN ]] || die "could not create the writes organisation and token"
	echo "organisation $org, token $(json_string prefix <<<"$token_json")…"
	echo "PUT /v1/sites/$WRITES_DOMAIN: HTTP $(put "/v1/sites/$WRITES_DOMAIN" '{"name":"bench writes"}')"
	echo "PUT /v1/sites/$WRITES_DOMAIN/fragments/%2Fw: HTTP $(put "/v1/sites/$WRITES_DOMAIN/fragments/%2Fw" '{"name":"w"}')"

	: >"$WORKDIR/writes.txt"
	for ((round = 1; round <= ROUNDS; round++)); do
		writes_round "$round" N
		writes_round "$round" W
	done
	printf 'writes during the runs: %d (HTTP status: %s)\n' "$(wc -l <"$WORKDIR/writes.txt")" \
		"$(cut -d' ' -f1 "$WORKDIR/writes.txt" | sort | uniq -c | awk '{ printf "%s%s×%s", sep, $2, $1; sep = ", " }')"
	sort -g -k2 "$WORKDIR/writes.txt" | awk '{ t[NR] = $2 } END {
		if (NR) printf "write response time: median %.1f ms, max %.1f ms\n", 1000 * t[int((NR + 1) / 2)], 1000 * t[NR] }'
	printf 'A with writes:    median %10.0f req/s  p99 %8.3f ms\n' "$(median W 3)" "$(ms "$(median W 5)")"
	printf 'A without writes: median %10.0f req/s  p99 %8.3f ms\n' "$(median N 3)" "$(ms "$(median N 5)")"
	echo "p99 with / without writes: $(ratio "$(median W 5)" "$(median N 5)")"
}

# ---------------------------------------------------------------- the report, per phase

# column_values PHASE COLUMN: the phase's values of one column of RESULTS, one a line.
column_values() {
	awk -F '\t' -v t="$1" -v c="$2" '$1 == t { print $c }' "$RESULTS"
}

# report_phase PHASE NAME: what the report counted and what PostgreSQL spent over the phase's
# runs: the totals, the median and lowest of each run's percentage, the median CPU per request.
report_phase() {
	local phase=$1 name=$2 sent counted median_pct lowest_pct pg_median pg_runs db_median off
	sent=$(column_values "$phase" 10 | awk '{ n += $1 } END { printf "%d", n }')
	((sent > 0)) || return 0
	counted=$(column_values "$phase" 11 | awk '{ n += $1 } END { printf "%d", n }')
	median_pct=$(column_values "$phase" 12 | median_of -)
	lowest_pct=$(column_values "$phase" 12 | awk 'NR == 1 || $1 < low { low = $1 } END { print low }')
	printf '%-22s counted %d of %d requests (%s %%); per run: median %s %%, lowest %s %%\n' "$name" \
		"$counted" "$sent" "$(awk -v c="$counted" -v n="$sent" 'BEGIN { printf "%.2f", 100 * c / n }')" \
		"$median_pct" "$lowest_pct"
	if [[ -n $PG_POSTMASTER ]]; then
		pg_median=$(column_values "$phase" 13 | median_of -)
		pg_runs=$(column_values "$phase" 13 | paste -sd ' ' -)
		db_median=$(column_values "$phase" 15 | median_of -)
		printf '%-22s PostgreSQL CPU %.3f µs/request (median; runs: %s), of which the bench database'"'"'s sessions %.3f µs\n' \
			"" "$pg_median" "$pg_runs" "$db_median"
	else
		printf '%-22s PostgreSQL CPU not measured (server not on this machine)\n' ""
	fi
	# wrk stops with requests in flight: agentcard answers and counts them, wrk does not. So a
	# run's count may exceed wrk's by up to a request a connection, plus those wrk timed out.
	off=$(awk -F '\t' -v t="$phase" -v c="$CONNECTIONS" '$1 == t && ($11 < $10 || $11 > $10 + c + $8) {
		printf "%s round %s: %+d; ", t, $2, $11 - $10 }' "$RESULTS")
	if [[ -n $off ]]; then
		printf '%-22s warning: counted - made outside 0 … %d (+ socket errors): %s\n' "" "$CONNECTIONS" "${off%; }"
	fi
}

reports() {
	local others
	section "Report: requests counted (target 100 %) and PostgreSQL CPU per request (target under 0.1 µs), per agentcard phase"
	report_phase A "$(target_name A)"
	report_phase N "A without writes"
	report_phase W "A with writes"
	echo "counted: the report's sum over the run's window, all organisations (report_minutes + report_hours)," \
		"read once it stopped growing for 2 flush periods (${REPORT_FLUSH_MS} ms each); over 100 %: requests in flight" \
		"when wrk stopped, answered and counted but not in wrk's total (at most one a connection)."
	if [[ -n $PG_POSTMASTER ]]; then
		echo "PostgreSQL CPU: utime+stime of the whole server (postmaster, its processes and those it reaped," \
			"less this script's session) from before the run until the report had flushed it," \
			"over the requests wrk made; one tick is 1/$CLK_TCK s. The bench database's sessions: agentcard's" \
			"connections (report flusher, pool, cache refresher) and autovacuum workers there, the part other" \
			"databases on a shared server cannot reach."
		others=$(pg_other_sessions)
		if ((others > 0 || PG_OTHER_SESSIONS_START > 0)); then
			echo "warning: sessions on other databases of this server (at the start $PG_OTHER_SESSIONS_START, now $others):" \
				"their work may count in PostgreSQL's CPU time"
		fi
	fi
}

# stop_agentcard: SIGTERM, then up to 15 s for its last flush and exit; shows its exit status.
stop_agentcard() {
	local tries status=0 start=$SECONDS
	kill -TERM "$PID_AGENTCARD" 2>/dev/null || true
	for ((tries = 0; tries < 150; tries++)); do
		kill -0 "$PID_AGENTCARD" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$PID_AGENTCARD" 2>/dev/null; then
		echo "warning: agentcard still ran 15 s after SIGTERM (left to the clean-up)"
		return 0
	fi
	wait "$PID_AGENTCARD" || status=$?
	forget "$PID_AGENTCARD"
	echo
	echo "agentcard stopped by SIGTERM: exit status $status after $((SECONDS - start)) s"
}

# ---------------------------------------------------------------- main

main() {
	local start=$SECONDS
	machine
	ensure_tools
	prepare_database
	load_data
	start_servers
	start_pg_session
	run_rounds
	report
	if [[ $SKIP_WRITES == 1 ]]; then
		section "Writes: skipped (SKIP_WRITES=1)"
	else
		writes_phase
	fi
	reports
	stop_agentcard
	echo
	echo "total time: $((SECONDS - start)) s"
}

main
