#!/usr/bin/env bash
# scripts/bench-signin-flood.sh [--quick]: GET /fragment alone and under two floods of sign-ins,
# and a real person signing in from new browsers during each.
#
# 1. Recreates database `agentcard_bench_flood` on the PostgreSQL server scripts/lib/postgres.sh
#    finds, builds the release binary (unless AGENTCARD_BIN names one already built, e.g. of
#    another commit), migrates, and loads scripts/bench-data.sql (as scripts/bench-load.sh).
#    Chromium, its driver and Selenium (in .venv/) are installed when absent
#    (scripts/lib/browser.sh).
# 2. Starts `agentcard serve` on 127.0.0.1:18090 (WORKERS threads, default nproc) with the
#    console on `console.localhost`, and makes a person with a password (a set-password link
#    of `admin user create`, used over HTTP), who signs in once (a browser of theirs from then
#    on: its device cookie is kept), and 50 other people with a password
#    (flood-person-0@bench.example to -49), the second flood's targets.
# 3. For each flood of FLOODS (default `emails people`): runs wrk (in a session of its own, see
#    scripts/lib/bench.sh) on /fragment, rotating over 1000 page URLs (scripts/bench/fragment.lua),
#    alone and under the flood, alternated for ROUNDS rounds (alone, flood; flood, alone; …);
#    then, during the same flood, the person signs in PERSON_SIGN_INS times from a new browser
#    (scripts/bench/signin_browser.py: headless Chromium, every cookie deleted first, solving the
#    proof of work in console.js's Web Worker when the page asks for one), timed each.
#    The floods (scripts/bench/signin_flood.py, in a session of their own too), FLOOD_RATE
#    sign-ins a second from FLOOD_CLIENTS clients, each request from one of FLOOD_ADDRESSES
#    loopback addresses (127.1.0.1 onward, 254 to a /24 block) taken in turn:
#      emails   a wrong password for an email nobody has, a new one each time;
#      people   a wrong password for one of the 50 people's emails, in turn.
#    A flood starts a second before wrk and ends after it.
# 4. Prints each run's req/s and p99, the flood's answers by status (200: the page asked for a
#    proof of work, 422: checked, 429: a limit or budget full, 503: the hashing queue full), the
#    CPU time of the server, of its hashing threads and of its blocking pool, each new browser's
#    sign-in (ok or not, seconds), then per flood the medians over rounds and the ratios
#    flood/alone against the targets (req/s at least 0.85 of alone: the flood client's own share
#    of the cores; p99 at most 1.2 times), the person's successes and durations, and a sign-in
#    with the right password once the floods are over, from the person's browser (held to the
#    rate of known people, which a flood leaves alone) and from a new one without script (303, or
#    200 asking for a proof of work while the rate of unknown browsers is still spent).
#
# wrk is installed from Debian's packages with apt-get when absent (scripts/lib/apt.sh). No
# traffic leaves loopback. Everything started here is stopped on exit.
#
# Knobs (environment): ROUNDS (3), DURATION seconds per run (10; 3 with --quick or QUICK=1),
# CONNECTIONS (64), THREADS wrk threads (2), WORKERS server threads (nproc), FLOODS (`emails
# people`), FLOOD_RATE sign-ins a second (25), FLOOD_CLIENTS (8), FLOOD_ADDRESSES (1000),
# FLOOD_NICE the flood client's nice, 1 to 19 (10; see start_flood),
# PERSON_SIGN_INS (10), AGENTCARD_BIN, AGENTCARD_PASSWORD_HASHES_PER_MINUTE,
# AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE and
# AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE (passed to the server), DATABASE_URL
# (see scripts/lib/postgres.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=bench-signin-flood
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh
# shellcheck source=scripts/lib/browser.sh
source scripts/lib/browser.sh

readonly DATABASE=agentcard_bench_flood
# The delivery key the data set stores (its SHA-256); not a secret, loopback only.
readonly BENCH_KEY=svc_live_0be4c11a7d5e9f3b2a6c8d0e1f4b7a9c3d5e8f20
readonly PORT=18090
readonly CONSOLE_HOST=console.localhost
readonly CONSOLE_ORIGIN=http://$CONSOLE_HOST:$PORT
# The bench person's password: not a secret, loopback only.
readonly EMAIL=flood-bench@bench.example PASSWORD='bench password, loopback only'
readonly FRAGMENT_LUA=scripts/bench/fragment.lua
readonly FLOOD_CLIENT=scripts/bench/signin_flood.py
readonly PERSON_CLIENT=scripts/bench/signin_browser.py
readonly PEOPLE=50

bench_args scripts/bench-signin-flood.sh "$@"

bench_knobs
WORKERS=$(knob WORKERS "${WORKERS:-$(nproc)}" 256)
FLOOD_RATE=$(knob FLOOD_RATE "${FLOOD_RATE:-25}" 10000)
FLOOD_CLIENTS=$(knob FLOOD_CLIENTS "${FLOOD_CLIENTS:-8}" 256)
FLOOD_ADDRESSES=$(knob FLOOD_ADDRESSES "${FLOOD_ADDRESSES:-1000}" 60000)
FLOOD_NICE=$(knob FLOOD_NICE "${FLOOD_NICE:-10}" 19)
PERSON_SIGN_INS=$(knob PERSON_SIGN_INS "${PERSON_SIGN_INS:-10}" 100)
read -r -a FLOOD_KINDS <<<"${FLOODS:-emails people}"
for flood in "${FLOOD_KINDS[@]}"; do
	[[ $flood == emails || $flood == people ]] || die "FLOODS: emails and/or people, not $flood"
done
PREBUILT_BIN=${AGENTCARD_BIN:-}

bench_server_env
unset AGENTCARD_CONSOLE_URL

bench_workdir agentcard-flood

# ---------------------------------------------------------------- database, build, server

prepare() {
	section "Database and build"
	command -v wrk >/dev/null || agentcard_apt_install wrk || die "the benchmark needs wrk"
	command -v setsid >/dev/null || die "the benchmark needs setsid (util-linux)"
	if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
		agentcard_apt_install chromium chromium-driver || die "the person's browser needs chromium"
	fi
	agentcard_venv "$AGENTCARD_SELENIUM" || die "the person's browser needs selenium"
	fresh_database "$DATABASE"
	if [[ -n $PREBUILT_BIN ]]; then
		AGENTCARD_BIN=$PREBUILT_BIN
		echo "binary: $AGENTCARD_BIN (AGENTCARD_BIN, not built here)"
	else
		build_profile --bin agentcard
	fi
	DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" migrate >/dev/null
	psql_bench -v bench_key="$BENCH_KEY" -f scripts/bench-data.sql
	bench_ids
}


start_server() {
	section "Server (loopback, $WORKERS worker threads, console on $CONSOLE_HOST)"
	local log=$WORKDIR/agentcard.log
	if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/"; then
		die "something already answers on 127.0.0.1:$PORT"
	fi
	# A simple command, so that $! is the server's own pid; at the default log filter, so that
	# its start-up says which priority the hashing threads got.
	DATABASE_URL=$BENCH_URL AGENTCARD_LISTEN=127.0.0.1:$PORT AGENTCARD_CONSOLE_HOST=$CONSOLE_HOST \
		AGENTCARD_REFRESH_MS=60000 AGENTCARD_WORKERS=$WORKERS env -u RUST_LOG "$AGENTCARD_BIN" serve >"$log" 2>&1 &
	PID_AGENTCARD=$!
	STARTED_PIDS+=("$PID_AGENTCARD")
	wait_http agentcard "$PID_AGENTCARD" "http://127.0.0.1:$PORT/ready" "$log"
	make_person
	make_people
}

# sign_in EMAIL PASSWORD [CURL-ARGS...]: the status of one console sign-in.
sign_in() {
	curl -sS -o /dev/null --max-time 60 -w '%{http_code}' -H "Host: $CONSOLE_HOST:$PORT" \
		-H "Origin: $CONSOLE_ORIGIN" --data-urlencode "email=$1" --data-urlencode "password=$2" \
		"${@:3}" "http://127.0.0.1:$PORT/sign-in"
}

# The person's browser: the cookies its sign-ins were given (the device cookie among them).
COOKIE_JAR=$WORKDIR/person-cookies.txt

make_person() {
	local link status
	link=$(DATABASE_URL=$BENCH_URL AGENTCARD_LISTEN=127.0.0.1:$PORT AGENTCARD_CONSOLE_HOST=$CONSOLE_HOST \
		"$AGENTCARD_BIN" admin user create --email "$EMAIL" --support |
		sed -n 's/.*"link": *"\([^"]*\)".*/\1/p')
	[[ $link == "$CONSOLE_ORIGIN/link/"* ]] || die "admin user create printed no link"
	status=$(curl -sS -o /dev/null --max-time 60 -w '%{http_code}' -H "Host: $CONSOLE_HOST:$PORT" \
		-H "Origin: $CONSOLE_ORIGIN" --data-urlencode "new_password=$PASSWORD" \
		"http://127.0.0.1:$PORT${link#"$CONSOLE_ORIGIN"}")
	[[ $status == 303 ]] || die "setting the bench person's password answered $status"
	[[ $(sign_in "$EMAIL" "$PASSWORD" -c "$COOKIE_JAR") == 303 ]] || die "the bench person cannot sign in"
	grep -q agentcard_device "$COOKIE_JAR" || die "the bench person's browser got no device cookie"
	echo "person: $EMAIL, signed in (303), a device cookie kept"
}

# make_people: the second flood's targets, people with the bench person's password hash (set
# in the database: 50 more hashes would take the known people's rate for a minute).
make_people() {
	local n
	for ((n = 0; n < PEOPLE; n++)); do
		DATABASE_URL=$BENCH_URL AGENTCARD_LISTEN=127.0.0.1:$PORT AGENTCARD_CONSOLE_HOST=$CONSOLE_HOST \
			"$AGENTCARD_BIN" admin user create --email "flood-person-$n@bench.example" --support >/dev/null
	done
	# psql's variables reach standard input only, not -c.
	psql_bench -v email="$EMAIL" <<-'SQL'
		UPDATE persons SET password_hash = (SELECT password_hash FROM persons WHERE email = :'email')
		 WHERE email LIKE 'flood-person-%@bench.example';
	SQL
	echo "people: $PEOPLE, flood-person-0@bench.example to -$((PEOPLE - 1)), with a password"
}

# ---------------------------------------------------------------- runs

# thread_ticks PREFIX: CPU time so far (utime+stime, ticks) of agentcard's threads whose name
# starts with PREFIX.
thread_ticks() {
	local task stat comm total=0
	local -a fields
	for task in /proc/"$PID_AGENTCARD"/task/*; do
		{ read -r comm <"$task/comm" && read -r stat <"$task/stat"; } 2>/dev/null || continue
		[[ $comm == "$1"* ]] || continue
		read -r -a fields <<<"${stat##*) }"
		total=$((total + fields[11] + fields[12]))
	done
	echo "$total"
}

# One line per run, tab-separated: 1 kind (alone-FLOOD, flood-FLOOD), 2 round, 3 req/s,
# 4 p99 µs, 5 non-2xx, 6 the flood's answers (or -).
RESULTS=$WORKDIR/results.tsv
FLOOD_FIRST=0

wrk_fragment() {
	local seconds=$1 output=$2
	BENCH_PARTNER_ID=$PARTNER_ID BENCH_FRAGMENT_ID=$FRAGMENT_ID BENCH_API_KEY=$BENCH_KEY \
		wrk_session "$seconds" "$output" "agentcard /fragment" -t "$THREADS" -c "$CONNECTIONS" \
		-d "${seconds}s" --latency --timeout 2s -s "$FRAGMENT_LUA" "http://127.0.0.1:$PORT"
}

ticks_s() {
	awk -v t="$1" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", t / hz }'
}

# start_flood FLOOD SECONDS OUTPUT: the flood client in the background (FLOOD_PID).
#
# The client stands in for a thousand machines elsewhere, whose CPU is not the server's: here it
# shares the two cores, so it runs in a session of its own (an autogroup of its own, as wrk) at
# nice FLOOD_NICE, the group's and the process's, so that its own wake-ups take as little as they
# can of the cores wrk and the server measure on. Whether it still sent its rate is printed
# with each run (sent/s) and checked in the results.
start_flood() {
	setsid -w sh -c 'n=$1; shift; echo "$n" >/proc/self/autogroup 2>/dev/null; exec nice -n "$n" "$@"' \
		flood "$FLOOD_NICE" python3 "$FLOOD_CLIENT" "$PORT" "$CONSOLE_HOST:$PORT" "$CONSOLE_ORIGIN" \
		"$FLOOD_RATE" "$FLOOD_CLIENTS" "$2" "$FLOOD_FIRST" "$1" "$FLOOD_ADDRESSES" >"$3" 2>&1 &
	FLOOD_PID=$!
	STARTED_PIDS+=("$FLOOD_PID")
}

# end_flood OUTPUT: waits for the flood client; its summary line (FLOOD_SAID) and the requests
# it sent (FLOOD_SENT).
end_flood() {
	wait "$FLOOD_PID" || die "the flood client failed: $(cat "$1")"
	forget "$FLOOD_PID"
	FLOOD_SAID=$(tail -n 1 "$1")
	FLOOD_SENT=$(sed -n 's/.*sent=\([0-9]*\).*/\1/p' <<<"$FLOOD_SAID")
	FLOOD_FIRST=$((FLOOD_FIRST + FLOOD_SENT))
}

# measure KIND FLOOD ROUND: one wrk run, under FLOOD when KIND is flood.
measure() {
	local kind=$1 name=$1-$2 round=$3 output=$WORKDIR/wrk-$1-$2-$3.txt flood=- flood_out
	local requests rps p99 non2xx hashing blocking all
	hashing=$(thread_ticks password-) blocking=$(thread_ticks blocking-) all=$(cpu_ticks "$PID_AGENTCARD")
	if [[ $kind == flood ]]; then
		flood_out=$WORKDIR/flood-$2-$round.txt
		start_flood "$2" "$((DURATION + 2))" "$flood_out"
		sleep 1
	fi
	wrk_fragment "$DURATION" "$output"
	if [[ $kind == flood ]]; then
		end_flood "$flood_out"
		flood="$FLOOD_SAID ($(awk -v n="$FLOOD_SENT" -v s="$((DURATION + 2))" 'BEGIN { printf "%.1f", n / s }')/s)"
	fi
	read -r requests rps _ p99 non2xx _ <<<"$(parse_wrk "$output")"
	((requests > 0)) || die "no request completed (see $output)"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$rps" "$p99" "$non2xx" "$flood" >>"$RESULTS"
	printf 'round %d/%d  %-13s %10.0f req/s  p99 %8.3f ms  non-2xx %d' "$round" "$ROUNDS" "$name" \
		"$rps" "$(ms "$p99")" "$non2xx"
	[[ $kind == flood ]] && printf '   flood: %s' "$flood"
	printf '\n           agentcard CPU %.1f s, of which hashing threads %.1f s, blocking pool %.1f s\n' \
		"$(ticks_s $(($(cpu_ticks "$PID_AGENTCARD") - all)))" "$(ticks_s $(($(thread_ticks password-) - hashing)))" \
		"$(ticks_s $(($(thread_ticks blocking-) - blocking)))"
	# The report's flush of the run's requests, out of the next run.
	sleep 2
}

# run_rounds FLOOD: the warm-up, then ROUNDS rounds of /fragment alone and under FLOOD.
run_rounds() {
	local round
	section "Warm-up (${WARMUP} s, not measured)"
	wrk_fragment "$WARMUP" "$WORKDIR/warmup.txt"
	sleep 2
	section "Runs: $ROUNDS rounds of alone and the $1 flood (${FLOOD_RATE} sign-ins/s from $FLOOD_CLIENTS clients, $FLOOD_ADDRESSES addresses), wrk $THREADS threads, $CONNECTIONS connections, ${DURATION} s each"
	# Every other round the other way round, so that a drift of the machine over the runs weighs
	# on both kinds alike.
	for ((round = 1; round <= ROUNDS; round++)); do
		if ((round % 2)); then
			measure alone "$1" "$round"
			measure flood "$1" "$round"
		else
			measure flood "$1" "$round"
			measure alone "$1" "$round"
		fi
	done
}

# One line per flood: 1 the flood, 2 the person's summary line, 3 the flood's answers meanwhile.
PERSON_RESULTS=$WORKDIR/person.tsv

# person_during FLOOD: the person signs in PERSON_SIGN_INS times from a new browser, during
# FLOOD (started 3 s before, ended once the browser is done).
person_during() {
	local flood_out=$WORKDIR/flood-$1-person.txt person_out=$WORKDIR/person-$1.txt
	section "The person signs in $PERSON_SIGN_INS times from a new browser during the $1 flood"
	start_flood "$1" $((PERSON_SIGN_INS * 70 + 10)) "$flood_out"
	sleep 3
	python3 "$PERSON_CLIENT" "$CONSOLE_ORIGIN" "$EMAIL" "$PASSWORD" "$PERSON_SIGN_INS" | tee "$person_out" ||
		die "the person's browser failed (see $person_out)"
	kill -TERM "$FLOOD_PID" 2>/dev/null || true
	end_flood "$flood_out"
	echo "flood meanwhile: $FLOOD_SAID"
	printf '%s\t%s\t%s\n' "$1" "$(tail -n 1 "$person_out")" "$FLOOD_SAID" >>"$PERSON_RESULTS"
}

# verdict NAME VALUE TARGET OP: "NAME VALUE (target OP TARGET: met|missed)".
verdict() {
	awk -v n="$1" -v v="$2" -v t="$3" -v op="$4" 'BEGIN {
		met = (op == ">=") ? v >= t : v <= t
		printf "%s %.2f (target %s %s: %s)\n", n, v, op, t, met ? "met" : "missed" }'
}

# report_flood FLOOD: the medians and ratios of FLOOD's rounds, and the person's sign-ins.
report_flood() {
	local alone=alone-$1 flood=flood-$1 alone_rps flood_rps alone_p99 flood_p99
	section "Results of the $1 flood: median over $ROUNDS rounds"
	alone_rps=$(median "$alone" 3) flood_rps=$(median "$flood" 3)
	alone_p99=$(median "$alone" 4) flood_p99=$(median "$flood" 4)
	printf '%-8s %12s %10s\n' run "req/s" "p99 ms"
	printf '%-8s %12.0f %10.3f\n' alone "$alone_rps" "$(ms "$alone_p99")" flood "$flood_rps" "$(ms "$flood_p99")"
	echo
	verdict "req/s flood/alone:" "$(ratio "$flood_rps" "$alone_rps")" 0.85 ">="
	verdict "p99 flood/alone:  " "$(ratio "$flood_p99" "$alone_p99")" 1.2 "<="
	echo "paired within rounds: req/s $(paired_ratio "$flood" "$alone" 3), p99 $(paired_ratio "$flood" "$alone" 4)"
	awk -F '\t' -v f="$flood" -v rate="$FLOOD_RATE" '$1 == f && match($6, /\(([0-9.]+)\/s\)/) {
		v = substr($6, RSTART + 1, RLENGTH - 4) + 0; if (n++ == 0 || v < low) low = v }
		END { printf "the flood sent at least %.1f sign-ins a second in each run (rate %s: %s)\n",
			low, rate, low >= 0.95 * rate ? "held" : "NOT held, the flood was weaker than asked" }' "$RESULTS"
	awk -F '\t' -v f="$1" '$1 == f { print "the person from new browsers: " $2 "; the flood meanwhile: " $3 }' "$PERSON_RESULTS"
}

report() {
	local flood
	for flood in "${FLOOD_KINDS[@]}"; do
		report_flood "$flood"
	done
	echo
	echo "after the floods, a sign-in with the right password: $(sign_in "$EMAIL" "$PASSWORD" -b "$COOKIE_JAR") from the person's browser, $(sign_in "$EMAIL" "$PASSWORD") from a new one without script"
	grep -m 1 'password hashing' "$WORKDIR/agentcard.log" || true
	machine
}

main() {
	local start=$SECONDS flood
	machine
	prepare
	start_server
	for flood in "${FLOOD_KINDS[@]}"; do
		run_rounds "$flood"
		person_during "$flood"
	done
	report
	echo
	echo "total time: $((SECONDS - start)) s"
}

main
