# shellcheck shell=bash
# scripts/lib/pg_cpu.sh: what PostgreSQL spends on a benchmark, and the report's count, read
# through one psql session. Sourced by scripts/bench-load.sh and scripts/bench-fleet-pg.sh
# after scripts/lib/bench.sh, with BENCH_URL set (fresh_database) and STARTED_PIDS (bench_workdir).
#
# Functions:
#   start_pg_session          the session (a coprocess); PG_POSTMASTER, the server's postmaster
#                             when it runs on this machine (else empty: nothing measured)
#   pg_session_query SQL      the one value SQL yields, read through the session
#   pg_other_sessions         client sessions on the server's other databases
#   pg_cpu_ticks              the whole server's CPU time so far, less the session's
#   pg_database_ticks, ticks_since BEFORE AFTER   the same for the bench database's processes
#   report_count              the requests the report has counted so far, all organisations
#   per_request TICKS N       µs of CPU time per request

# One psql session for the whole benchmark, a coprocess: the count is read back through it,
# and its server process is left out of PostgreSQL's CPU time, so reading the figures adds
# nothing to what they measure. A psql started per query would have the postmaster fork a
# server process each time, whose few milliseconds of CPU time it collects as its reaped
# children's (pg_cpu_ticks): a tenth of a µs per request over a short run.
start_pg_session() {
	local children
	coproc PG_SESSION {
		export PGCONNECT_TIMEOUT=10
		exec psql -X -w -q -At -v ON_ERROR_STOP=1 -d "$BENCH_URL" 2>&1
	}
	STARTED_PIDS+=("$PG_SESSION_PID")
	PG_SESSION_BACKEND=$(pg_session_query 'SELECT pg_backend_pid()')
	[[ $PG_SESSION_BACKEND =~ ^[0-9]+$ ]] || die "psql session: $PG_SESSION_BACKEND"
	# The session's server process is a child of the postmaster, when the server runs here
	# (not on another host nor in a container of its own).
	PG_POSTMASTER=""
	if [[ $(proc_comm "$PG_SESSION_BACKEND") == postgres ]]; then
		PG_POSTMASTER=$(proc_field "$PG_SESSION_BACKEND" 1)
		[[ $(proc_comm "$PG_POSTMASTER") == postgres ]] || PG_POSTMASTER=""
	fi
	if [[ -n $PG_POSTMASTER ]]; then
		children=$(pgrep -c -P "$PG_POSTMASTER" || true)
		echo "PostgreSQL: postmaster pid $PG_POSTMASTER and ${children:-0} children on this machine; their CPU time" \
			"from /proc (1/$CLK_TCK s ticks), less this script's session (pid $PG_SESSION_BACKEND)"
	else
		echo "PostgreSQL: its processes are not on this machine's /proc (remote server?): its CPU time is not measured"
	fi
	PG_OTHER_SESSIONS_START=$(pg_other_sessions)
	if ((PG_OTHER_SESSIONS_START > 0)); then
		echo "warning: $PG_OTHER_SESSIONS_START session(s) on other databases of this server: their work counts in PostgreSQL's CPU time"
	fi
}

# pg_session_query SQL: the one value SQL (one row, one column) yields, from the session.
pg_session_query() {
	local value
	[[ -n ${PG_SESSION[1]:-} ]] || die "the psql session has ended"
	printf '%s;\n' "$1" >&"${PG_SESSION[1]}"
	IFS= read -r -t 30 value <&"${PG_SESSION[0]}" || die "psql session: no answer within 30 s to: $1"
	printf '%s\n' "$value"
}

# pg_other_sessions: client sessions on the server's other databases, now.
pg_other_sessions() {
	local value
	value=$(pg_session_query "SELECT count(*) FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND datname IS DISTINCT FROM current_database()")
	[[ $value =~ ^[0-9]+$ ]] || die "psql session: $value"
	echo "$value"
}

# proc_comm PID: the process's name (empty when there is none).
proc_comm() {
	local comm=""
	{ read -r comm <"/proc/$1/comm"; } 2>/dev/null || true
	printf '%s\n' "$comm"
}

# proc_field PID INDEX: a field of /proc/PID/stat, counted from 0 after the command name (0:
# state, 1: ppid, 11: utime, 12: stime, 13: cutime, 14: cstime); empty when PID has ended.
proc_field() {
	local stat="" fields
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || true
	# The command name is in parentheses and may hold spaces.
	read -r -a fields <<<"${stat##*) }"
	printf '%s\n' "${fields[$2]:-}"
}

# pg_cpu_ticks: the PostgreSQL server's CPU time so far, in clock ticks: utime+stime of the
# postmaster and each of its children (connections, checkpointer, writers, autovacuum), and
# the postmaster's cutime+cstime, the time of the children it reaped (connections and
# autovacuum workers that ended), less the session of this script. A child that ends between
# two readings moves its time from the first sum to the second: the total only grows.
pg_cpu_ticks() {
	local pid stat total=0
	local -a children fields
	mapfile -t children < <(pgrep -P "$PG_POSTMASTER" || true)
	for pid in "${children[@]}"; do
		[[ $pid == "$PG_SESSION_BACKEND" ]] && continue
		stat=""
		{ read -r stat <"/proc/$pid/stat"; } 2>/dev/null || continue
		read -r -a fields <<<"${stat##*) }"
		total=$((total + fields[11] + fields[12]))
	done
	{ read -r stat <"/proc/$PG_POSTMASTER/stat"; } 2>/dev/null || die "the PostgreSQL postmaster (pid $PG_POSTMASTER) has ended"
	read -r -a fields <<<"${stat##*) }"
	echo $((total + fields[11] + fields[12] + fields[13] + fields[14]))
}

# report_count: the requests agentcard's report has counted so far: all organisations (org_id
# '' holds the requests refused before a key was known), minutes and the hours the roll-up
# moves them to, in one snapshot.
report_count() {
	local value
	value=$(pg_session_query 'SELECT (SELECT coalesce(sum(requests), 0) FROM report_minutes)
		+ (SELECT coalesce(sum(requests), 0) FROM report_hours)')
	[[ $value =~ ^[0-9]+$ ]] || die "psql session: $value"
	echo "$value"
}

# pg_database_ticks: "PID:TICKS …", utime+stime of the server processes on the bench database
# now (agentcard's connections: pool, report flusher, cache refresher; autovacuum workers on
# it), less this script's session. Part of pg_cpu_ticks, and the part no other database's
# work (a shared server's) can reach.
pg_database_ticks() {
	local pids pid stat
	local -a fields out=()
	pids=$(pg_session_query "SELECT coalesce(string_agg(pid::text, ' '), '') FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()")
	[[ $pids =~ ^[0-9\ ]*$ ]] || die "psql session: $pids"
	for pid in $pids; do
		stat=""
		{ read -r stat <"/proc/$pid/stat"; } 2>/dev/null || continue
		read -r -a fields <<<"${stat##*) }"
		out+=("$pid:$((fields[11] + fields[12]))")
	done
	echo "${out[*]}"
}

# ticks_since BEFORE AFTER: the ticks the processes of AFTER (pg_database_ticks) spent since
# BEFORE; a process that has ended meanwhile is missed (agentcard's connections last).
ticks_since() {
	awk -v before="$1" -v after="$2" 'BEGIN {
		n = split(before, b, " "); for (i = 1; i <= n; i++) { split(b[i], f, ":"); t[f[1]] = f[2] }
		n = split(after, a, " "); for (i = 1; i <= n; i++) { split(a[i], f, ":"); sum += f[2] - t[f[1]] }
		printf "%d", sum }'
}

# per_request TICKS REQUESTS: µs of CPU time per request.
per_request() {
	awk -v t="$1" -v hz="$CLK_TCK" -v n="$2" 'BEGIN { printf "%.3f", (n > 0 ? t / hz * 1e6 / n : 0) }'
}
