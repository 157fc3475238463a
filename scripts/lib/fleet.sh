# shellcheck shell=bash
# scripts/lib/fleet.sh: instances of `agentcard serve` behind HAProxy over a PostgreSQL cluster
# of their own, under wrk. Sourced by scripts/fleet.sh, scripts/failover-drill.sh and
# scripts/upgrade-drill.sh after scripts/lib/bench.sh, which then call `fleet_setup` (its
# `cleanup` replaces bench.sh's, and stops the cluster too). The caller sets:
#   LB_PORT FIRST_PORT PG_PORT STATS_PORT   HAProxy, the first instance (the others follow),
#                                           the cluster, HAProxy's statistics
#   AGENT_UA
#   AGENTCARD_BIN                           the binary start_instance starts
#   DB_URL                                  once the cluster and its database are made
#
# Functions:
#   fleet_setup NAME              the servers' environment, WORKDIR (bench_workdir NAME), an
#                                 empty RESULTS in it (a line per wrk run) and the knobs:
#                                 INSTANCES (3), CONNECTIONS (64), THREADS (2), DRAIN_MS (5000)
#                                 from the environment, bounded
#   cluster_create, cluster_start, cluster_stop [MODE]   the cluster in WORKDIR/pg
#   start_instance I, stop_instance I (SIGTERM; a status other than 0 counts in BAD_EXITS)
#   instance_port I, instance_log I
#   start_haproxy, haproxy_stat PROXY SERVER FIELD, wait_up I, backend_responses
#   start_fleet                   INSTANCES instances and HAProxy, until every one is UP
#   ensure_fleet_tools            wrk, curl, setsid and HAProxy, installed when absent
#   start_load PHASE, stop_load   wrk through HAProxy, its figures appended to RESULTS
#   print_phases                  RESULTS as a table
#   read_demo                     TOKEN, SITE, FRAGMENT_PATH, WRITTEN_PATH from WORKDIR/demo.json
#   report_total                  the report's count of requests (minutes and hours)

PG_BINDIR=
BAD_EXITS=0
declare -a INSTANCE_PIDS=()

fleet_setup() {
	bench_server_env
	bench_workdir "$1"
	PG_DIR=$WORKDIR/pg
	RESULTS=$WORKDIR/results.tsv
	: >"$RESULTS"
	INSTANCES=$(knob INSTANCES "${INSTANCES:-3}" 9)
	CONNECTIONS=$(knob CONNECTIONS "${CONNECTIONS:-64}" 2000)
	THREADS=$(knob THREADS "${THREADS:-2}" 64)
	DRAIN_MS=$(knob DRAIN_MS "${DRAIN_MS:-5000}" 60000)
}

# The clean-up of scripts/lib/bench.sh, and the cluster (a caller that has more to clean
# redefines `cleanup` and calls this).
fleet_cleanup() {
	stop_started
	if [[ -n $PG_BINDIR ]]; then
		cluster_stop immediate 2>/dev/null || true
	fi
	rm -rf "$WORKDIR"
}

cleanup() {
	fleet_cleanup
}

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

# start_fleet: INSTANCES instances of AGENTCARD_BIN behind HAProxy, each in rotation.
start_fleet() {
	local i
	for ((i = 0; i < INSTANCES; i++)); do
		start_instance "$i"
	done
	start_haproxy
	for ((i = 0; i < INSTANCES; i++)); do
		wait_up "$i"
	done
}

# Responses the instances gave through HAProxy, every status.
backend_responses() {
	local field total=0
	for field in hrsp_1xx hrsp_2xx hrsp_3xx hrsp_4xx hrsp_5xx hrsp_other; do
		total=$((total + $(haproxy_stat agentcard BACKEND "$field")))
	done
	echo "$total"
}

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

# read_demo: what the load and the writes need of the demo data.
# shellcheck disable=SC2034 # TOKEN, SITE and WRITTEN_PATH are the callers'
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

ensure_fleet_tools() {
	ensure_bench_tools
	command -v haproxy >/dev/null || agentcard_apt_install haproxy || die "the fleet needs haproxy"
	# Its version read whole, then its first line: HAProxy writes the version in several writes,
	# and a `head` gone after the first line would kill it (SIGPIPE) under pipefail.
	local version
	version=$(haproxy -v)
	echo "${version%%$'\n'*}"
}

# print_phases: per wrk run of RESULTS, its requests, non-2xx answers and socket errors.
print_phases() {
	local phase requests non2xx errors
	printf '%-10s %12s %10s %14s\n' phase requests non-2xx "socket errors"
	while IFS=$'\t' read -r phase requests non2xx errors; do
		printf '%-10s %12s %10s %14s\n' "$phase" "$requests" "$non2xx" "$errors"
	done <"$RESULTS"
}
