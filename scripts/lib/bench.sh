# shellcheck shell=bash
# scripts/lib/bench.sh: what the benchmarks share. Sourced by scripts/bench-load.sh,
# scripts/bench-edge.sh and scripts/bench-signin-flood.sh after `set -euo pipefail`, from the
# repository's root (each `cd`s there first), with BENCH_NAME set to the script's name (the
# prefix of its messages).
# Packages are installed with scripts/lib/apt.sh.
#
# Functions:
#   bench_args SCRIPT ARGS...   --quick sets QUICK=1, -h/--help prints the usage (the header
#                               comment of SCRIPT) and exits, anything else exits 2
#   knob NAME VALUE MAX         VALUE when it is an integer from 1 to MAX, else exits 2
#   bench_knobs                 ROUNDS, DURATION, CONNECTIONS, THREADS, WARMUP from the
#                               environment (QUICK=1: 3 s runs instead of 10 s)
#   bench_server_env            RUST_LOG=warn, and none of the caller's AGENTCARD_ settings
#   section TEXT, die TEXT      a heading; an error, and exit 1
#   bench_workdir PREFIX        WORKDIR (a temporary folder), STARTED_PIDS, and the traps that
#                               stop every process in STARTED_PIDS and remove WORKDIR on exit
#   forget PID, wait_http NAME PID URL LOG, stop_started
#   nginx_binary, ensure_bench_tools   wrk, nginx, curl and setsid, installed when absent
#   nginx_conf DIR WORKERS, start_nginx_in VAR DIR NAME URL   an nginx of its own in DIR
#   fresh_database NAME         BENCH_URL: database NAME, dropped and created afresh
#   psql_bench ARGS...          psql on BENCH_URL, stopping at the first error
#   bench_ids                   PARTNER_ID, FRAGMENT_ID of scripts/bench-data.sql
#   build_profile ARGS...       cargo build --profile $BUILD_PROFILE ARGS (bench-lto, the
#                               benchmarks' profile, unless set); sets TARGET_DIR, AGENTCARD_BIN
#   cpu_ticks PID...            utime+stime of the processes so far, in 1/CLK_TCK s
#   wrk_session SECONDS OUTPUT NAME WRK-ARGS...   wrk in a session of its own
#   parse_wrk OUTPUT            "requests rps p50_us p99_us non2xx socket_errors bytes_read"
#   wrk_max_us OUTPUT           the run's longest latency, in µs
#   ms, median_of, median, ratio, paired_ratio, machine (see each)

# shellcheck source=scripts/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

# Numbers are printed and parsed with a decimal point.
export LC_NUMERIC=C
CLK_TCK=$(getconf CLK_TCK)

# ---------------------------------------------------------------- arguments, knobs, messages

bench_args() {
	local script=$1
	case ${2:-} in
	--quick) QUICK=1 ;;
	-h | --help)
		bench_usage "$script"
		exit 0
		;;
	"") ;;
	*)
		bench_usage "$script" >&2
		exit 2
		;;
	esac
}

# bench_usage SCRIPT: the script's header comment, from its second line to `set -euo`.
bench_usage() {
	sed -n '2,/^set -euo/p' "$1" | sed -e '$d' -e 's/^# \{0,1\}//'
}

# Every knob is a bounded positive integer, so every loop below is bounded.
knob() {
	local name=$1 value=$2 max=$3
	if ! [[ $value =~ ^[1-9][0-9]*$ ]] || ((value > max)); then
		echo "$BENCH_NAME: $name must be an integer from 1 to $max (got '$value')" >&2
		exit 2
	fi
	printf '%s\n' "$value"
}

# shellcheck disable=SC2034 # WARMUP is the callers'
bench_knobs() {
	local default_duration=10
	QUICK=${QUICK:-0}
	[[ $QUICK == 1 ]] && default_duration=3
	ROUNDS=$(knob ROUNDS "${ROUNDS:-3}" 20)
	DURATION=$(knob DURATION "${DURATION:-$default_duration}" 300)
	CONNECTIONS=$(knob CONNECTIONS "${CONNECTIONS:-64}" 10000)
	THREADS=$(knob THREADS "${THREADS:-2}" 64)
	WARMUP=$((DURATION < 10 ? 1 : 2))
}

# bench_server_env: the servers read these; a caller's own settings must not change what is
# measured.
bench_server_env() {
	export RUST_LOG=warn
	unset AGENTCARD_PREFIX AGENTCARD_BASE_HOST AGENTCARD_CONSOLE_HOST AGENTCARD_LEGACY_HOST \
		AGENTCARD_CLIENT_IP_HEADER AGENTCARD_TRUSTED_PROXIES AGENTCARD_REPORT_FLUSH_MS \
		AGENTCARD_REPORT_MINUTES_HOURS AGENTCARD_REPORT_RETENTION_DAYS AGENTCARD_REPORT_PAGES_PER_HOUR
}

section() {
	printf '\n=== %s ===\n' "$*"
}

die() {
	echo "$BENCH_NAME: error: $*" >&2
	exit 1
}

# ---------------------------------------------------------------- processes and clean-up

# bench_workdir PREFIX: a temporary folder PREFIX.XXXXXX, removed on exit with every process
# this script started.
bench_workdir() {
	WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	# nginx's workers may run as another user: they must read its files.
	chmod 755 "$WORKDIR"
	STARTED_PIDS=()
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Stops what this script started: TERM, up to 5 s, then KILL.
stop_started() {
	local pid tries
	for pid in "${STARTED_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${STARTED_PIDS[@]}"; do
		for ((tries = 0; tries < 50; tries++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	STARTED_PIDS=()
}

cleanup() {
	stop_started
	rm -rf "$WORKDIR"
	agentcard_stop_private_postgres >/dev/null 2>&1 || true
}

# forget PID: drop a process that has ended from the clean-up list.
forget() {
	local pid kept=()
	for pid in "${STARTED_PIDS[@]}"; do
		[[ $pid == "$1" ]] || kept+=("$pid")
	done
	STARTED_PIDS=("${kept[@]}")
}

# wait_http NAME PID URL LOG: wait (up to 30 s) until URL answers 200 while PID lives.
wait_http() {
	local name=$1 pid=$2 url=$3 log=$4 tries
	for ((tries = 0; tries < 300; tries++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 20 "$log" >&2 || true
			die "$name exited during start-up (log above)"
		fi
		if curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	tail -n 20 "$log" >&2 || true
	die "$name did not answer 200 on $url within 30 s"
}

# ---------------------------------------------------------------- tools, database, build

nginx_binary() {
	command -v nginx 2>/dev/null || { [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx; }
}

# nginx_conf DIR WORKERS: writes DIR/nginx.conf, an nginx in the foreground (a master and
# WORKERS workers) that keeps its files in DIR (error.log, nginx.pid, tmp/), with the lines of
# its http block, after the common ones, read from standard input.
nginx_conf() {
	local dir=$1 workers=$2
	mkdir -p "$dir/tmp"
	chmod 755 "$dir"
	{
		cat <<-EOF
			daemon off;
			master_process on;
			worker_processes $workers;
			pid $dir/nginx.pid;
			error_log $dir/error.log warn;
			events { worker_connections 1024; }
			http {
			    access_log off;
			    sendfile on;
			    tcp_nodelay on;
			    keepalive_timeout 65s;
			    keepalive_requests 1000000000;
			    client_body_temp_path $dir/tmp/body;
			    proxy_temp_path $dir/tmp/proxy;
			    fastcgi_temp_path $dir/tmp/fastcgi;
			    uwsgi_temp_path $dir/tmp/uwsgi;
			    scgi_temp_path $dir/tmp/scgi;
		EOF
		sed 's/^/    /'
		echo '}'
	} >"$dir/nginx.conf"
}

# start_nginx_in VAR DIR NAME URL: starts the nginx of DIR/nginx.conf (nginx_conf), sets VAR
# to its pid, and waits until URL answers 200.
start_nginx_in() {
	local -n started_pid=$1
	local dir=$2 name=$3 url=$4
	"$(nginx_binary)" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" >"$dir/stdout.log" 2>&1 &
	started_pid=$!
	STARTED_PIDS+=("$started_pid")
	wait_http "$name" "$started_pid" "$url" "$dir/error.log"
}

ensure_bench_tools() {
	local -a missing=()
	command -v wrk >/dev/null || missing+=(wrk)
	nginx_binary >/dev/null || missing+=(nginx)
	command -v curl >/dev/null || missing+=(curl)
	command -v setsid >/dev/null || missing+=(util-linux)
	if ((${#missing[@]} > 0)); then
		agentcard_apt_install "${missing[@]}" || die "the benchmark needs ${missing[*]}"
	fi
}

psql_bench() {
	PGCONNECT_TIMEOUT=10 psql -X -w -q -v ON_ERROR_STOP=1 -d "$BENCH_URL" "$@"
}

# fresh_database NAME: finds the server (scripts/lib/postgres.sh), drops database NAME there
# and creates it again; sets BENCH_URL.
fresh_database() {
	local name=$1
	agentcard_find_postgres
	BENCH_URL=$(agentcard_database_url "$name")
	echo "database: $(_agentcard_mask "$BENCH_URL") (dropped and created afresh)"
	PGCONNECT_TIMEOUT=10 psql -X -w -q -v ON_ERROR_STOP=1 -d "$AGENTCARD_PG_URL" \
		-c 'SET client_min_messages = warning' -c "DROP DATABASE IF EXISTS $name WITH (FORCE)"
	agentcard_ensure_database "$name"
}

# bench_ids: PARTNER_ID, the bench organisation of scripts/bench-data.sql, and FRAGMENT_ID,
# site1.example's /section1 there: what scripts/bench/fragment.lua asks for.
# shellcheck disable=SC2034 # PARTNER_ID and FRAGMENT_ID are the callers'
bench_ids() {
	PARTNER_ID=$(psql_bench -At -c "SELECT id FROM orgs WHERE id LIKE 'acc\_bench%'")
	FRAGMENT_ID=$(psql_bench -At -c "SELECT f.id FROM fragments f JOIN sites s ON s.id = f.site_id
		WHERE s.domain = 'site1.example' AND f.ref = '/section1'")
	[[ -n $PARTNER_ID && -n $FRAGMENT_ID ]] || die "the data set has no bench organisation or fragment"
}

# build_profile ARGS...: the build of ARGS in profile BUILD_PROFILE, by default bench-lto
# (Cargo.toml: whole-program LTO, what the figures of docs/performance.md are measured with;
# BUILD_PROFILE=release measures what `cargo build --release` gives; `dev`, a debug build, only
# for what the build does not change, as PostgreSQL's side). Cargo.lock is respected
# when there is one.
# shellcheck disable=SC2034 # AGENTCARD_BIN is the callers'
build_profile() {
	local -a locked=()
	local profile=${BUILD_PROFILE:-bench-lto}
	[[ -f Cargo.lock ]] && locked=(--locked)
	echo "cargo build --profile $profile $*"
	cargo build --profile "$profile" "${locked[@]}" "$@"
	# Cargo's `dev` profile builds into target/debug.
	TARGET_DIR=${CARGO_TARGET_DIR:-target}/${profile/#dev/debug}
	AGENTCARD_BIN=$TARGET_DIR/agentcard
}

# ---------------------------------------------------------------- measuring

# cpu_ticks PID...: utime + stime, in clock ticks, summed (all threads of each process).
cpu_ticks() {
	local pid stat total=0
	local -a fields
	for pid in "$@"; do
		stat=$(<"/proc/$pid/stat")
		# Fields after the command name, which is in parentheses and may hold spaces.
		read -r -a fields <<<"${stat##*) }"
		total=$((total + fields[11] + fields[12]))
	done
	echo "$total"
}

# wrk_session SECONDS OUTPUT NAME WRK-ARGS...: one wrk run (WRK-ARGS include its duration,
# SECONDS), output kept in OUTPUT; NAME is the target, for the message when it fails.
# Variables set before the call reach wrk's Lua script.
#
# wrk runs in a session of its own, as a client on another host would be in a scheduling
# group of its own. In the servers' session (one autogroup, Linux's default) a server
# thread and a wrk thread that wake each other kept one core for over a second at a time,
# and PostgreSQL, in its own group, waited that long for a core: management requests took
# up to 18 s and the report's writes fell behind, which no deployment would see.
wrk_session() {
	local seconds=$1 output=$2 name=$3
	shift 3
	if ! timeout "$((seconds + 30))" setsid -w wrk "$@" >"$output" 2>&1; then
		cat "$output" >&2
		die "wrk failed against $name"
	fi
}

# awk functions reading wrk's figures with their units: bytes(v) in bytes, us(v) in µs.
readonly WRK_UNITS_AWK='
	function bytes(v) {
		if (v ~ /GB$/) return v * 1073741824
		if (v ~ /MB$/) return v * 1048576
		if (v ~ /KB$/) return v * 1024
		return v + 0
	}
	function us(v) {
		if (v ~ /us$/) return v + 0
		if (v ~ /ms$/) return v * 1000
		if (v ~ /m$/) return v * 60000000
		if (v ~ /s$/) return v * 1000000
		return v + 0
	}'

# Reads wrk --latency output: requests rps p50_us p99_us non2xx socket_errors bytes_read.
parse_wrk() {
	awk "$WRK_UNITS_AWK"'
		/requests in/ { requests = $1; read = bytes($5) }
		/^Requests\/sec:/ { rps = $2 }
		/^ +50%/ { p50 = us($2) }
		/^ +99%/ { p99 = us($2) }
		/Non-2xx or 3xx responses:/ { non2xx = $NF }
		/Socket errors:/ { for (i = 3; i <= NF; i++) { gsub(",", "", $i); if ($i ~ /^[0-9]+$/) errors += $i } }
		END { printf "%d %.2f %.1f %.1f %d %d %.0f\n", requests, rps, p50, p99, non2xx, errors, read }
	' "$1"
}

# wrk_max_us OUTPUT: the longest latency of a wrk run, in µs (of its "Latency  avg stdev
# max" line, not the "Latency Distribution" heading).
wrk_max_us() {
	awk "$WRK_UNITS_AWK"'/^ +Latency +[0-9]/ { max = us($4) } END { printf "%.1f\n", max }' "$1"
}

# per_request_us TICKS REQUESTS: CPU µs per request, two decimals.
per_request_us() {
	awk -v t="$1" -v hz="$CLK_TCK" -v n="$2" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }'
}

ms() {
	awk -v v="$1" 'BEGIN { printf "%.3f", v / 1000 }'
}

# median_of EMPTY: median of the numbers on standard input, one a line; EMPTY when none.
median_of() {
	sort -g | awk -v empty="$1" '{ v[NR] = $1 }
		END { if (NR == 0) print empty; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# median TARGET COLUMN: median of one column of RESULTS (tab-separated, the target in column
# 1, the round in column 2) over the target's rounds.
median() {
	awk -F '\t' -v t="$1" -v c="$2" '$1 == t { print $c }' "$RESULTS" | median_of 0
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'
}

# paired_ratio NUMERATOR DENOMINATOR COLUMN: median over rounds of NUMERATOR's COLUMN over
# DENOMINATOR's in the same round. A round's runs follow each other within a minute, so a
# drift of the machine's speed over the whole run, which can set the two medians in different
# rounds, cancels out here.
paired_ratio() {
	local value
	value=$(awk -F '\t' -v n="$1" -v d="$2" -v c="$3" '
		$1 == n { a[$2] = $c }
		$1 == d { b[$2] = $c }
		END { for (r in a) if ((r in b) && b[r] != 0) printf "%.6f\n", a[r] / b[r] }' "$RESULTS" | median_of "")
	if [[ -n $value ]]; then ratio "$value" 1; else echo n/a; fi
}

machine() {
	local model
	model=$(awk -F ': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "machine: $(nproc) CPUs, ${model:-unknown CPU}, $(uname -sr), load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
}
