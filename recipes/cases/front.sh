# shellcheck shell=bash
# recipes/cases/front.sh: what the front recipes' tests share (recipes/front/test.sh, nginx;
# recipes/front-haproxy/test.sh, HAProxy): a proxy in front of the origin sending only agents
# to a real `agentcard edge`, checked against the shared edge cases. Sourced from the
# repository's root with BENCH_NAME set; it sources scripts/lib/bench.sh and scripts/lib/ports.sh.
#
#   front_options ARGS...      reads a test's arguments: sets keep (--keep) and check_args
#                               (the rest, for the harness's checks)
#   front_markers CONF REGEX    checks that the markers the gate spells (REGEX's group 1 in
#                               CONF, `|`-separated) are data/agent-markers-v0.1.txt's
#   front_start [--keep]        builds the binary (AGENTCARD_BIN=PATH to use another), starts
#                               the harness's stubs and `agentcard edge` on free loopback ports;
#                               sets WORKDIR, origin_port, card_port, edge_port, front_port,
#                               origin, front, edge_pid
#   front_checks RUNTIME FRONT_PID [harness check options]   the checks 2 to 4 below, through
#                               the front listening on $front; exit status 0 when all passed:
#   2. every shared case through the front: each marker's page gets the card (through the
#      edge), every other request is the origin's answer;
#   3. fail open: the edge stopped (SIGSTOP: no answer) gives an agent the origin's page after
#      the recipe's time-out; the edge gone (connection refused) gives it at once;
#   4. humans never reach the edge: a listener in the edge's place counts no connection while
#      every case without a marker in its User-Agent runs again, and counts the agent request
#      sent then.

# shellcheck source=../../scripts/lib/bench.sh
source scripts/lib/bench.sh
# shellcheck source=../../scripts/lib/ports.sh
source scripts/lib/ports.sh

front_options() {
	keep=
	check_args=()
	while (($#)); do
		case $1 in
		--keep) keep=1; shift ;;
		*) check_args+=("$1"); shift ;;
		esac
	done
}

front_markers() {
	python3 - "$1" data/agent-markers-v0.1.txt "$2" <<'PY'
import re, sys
conf, data = (open(path, encoding="utf-8").read() for path in sys.argv[1:3])
markers = [line.split()[1] for line in data.splitlines()
           if line.strip() and not line.startswith("#") and not line.startswith("version:")]
found = re.search(sys.argv[3], conf, re.S)
spelled = found.group(1).split("|") if found else []
if [m.lower() for m in spelled] != [m.lower() for m in markers]:
    sys.exit(f"{sys.argv[1]}: the gate's regex spells {spelled}, the data file lists {markers}")
print(f"ok the gate lists the {len(markers)} markers of the data file")
PY
}

front_start() {
	local keep=${1:-}
	if [[ -z ${AGENTCARD_BIN:-} ]]; then
		build_profile --bin agentcard
	fi
	[[ -x $AGENTCARD_BIN ]] || die "no agentcard binary at $AGENTCARD_BIN"
	command -v curl >/dev/null || agentcard_apt_install curl || die "curl is needed"
	bench_workdir agentcard-edge-front
	if [[ -n $keep ]]; then
		trap 'stop_started; echo "$BENCH_NAME: kept $WORKDIR" >&2' EXIT
	fi
	front_budget=800
	read -r origin_port card_port edge_port front_port < <(free_ports 4)
	origin=http://127.0.0.1:$origin_port
	front=http://127.0.0.1:$front_port
	python3 recipes/cases/harness.py stubs --origin-port "$origin_port" --card-port "$card_port" \
		--markup none --budget-ms "$front_budget" >"$WORKDIR/stubs.out" 2>"$WORKDIR/stubs.log" &
	STARTED_PIDS+=($!)
	wait_http "the harness stubs" "$!" "$origin/human-chrome" "$WORKDIR/stubs.log"
	# The shared cases' site and key (recipes/cases/cases.json).
	printf '[[site]]\ndomain = "news.example"\npartner_id = "org_edge"\nfragment_id = "frg_edge"\nlang = "fr"\n' \
		>"$WORKDIR/sites.toml"
	env -u RUST_LOG AGENTCARD_EDGE_KEY=svc_live_edgetestkey0123456789 \
		AGENTCARD_EDGE_LISTEN="127.0.0.1:$edge_port" AGENTCARD_EDGE_ORIGIN="$origin" \
		AGENTCARD_EDGE_SERVICE="http://127.0.0.1:$card_port" AGENTCARD_EDGE_SITES="$WORKDIR/sites.toml" \
		AGENTCARD_EDGE_BUDGET_MS=$front_budget "$AGENTCARD_BIN" edge >>"$WORKDIR/edge.log" 2>&1 &
	edge_pid=$!
	STARTED_PIDS+=("$edge_pid")
	wait_http "agentcard edge" "$edge_pid" "http://127.0.0.1:$edge_port/human-chrome" "$WORKDIR/edge.log"
}

_front_failed() {
	echo "FAIL $*"
	_front_status=1
}

# _front_check ARGS...: the shared cases through the front.
_front_check() {
	python3 recipes/cases/harness.py check --runtime "$_front_runtime" --edge "$front" --origin "$origin" \
		--card "http://127.0.0.1:$card_port" "$@"
}

# _front_agent_page NAME: one agent request for case NAME through the front; prints "status
# seconds" and writes the body to $WORKDIR/NAME.agent; the origin's body for the same request
# to NAME.origin.
_front_agent_page() {
	local gptbot='Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)'
	curl -sS -o "$WORKDIR/$1.origin" -H 'Host: news.example' -A "$gptbot" "$origin/$1"
	curl -sS -o "$WORKDIR/$1.agent" --max-time 30 -w '%{http_code} %{time_total}\n' \
		-H 'Host: news.example' -A "$gptbot" "$front/$1"
}

# The origin's page, not composed, within the recipe's time-out and a generous margin.
_front_expect_origin_page() {
	local name=$1 why=$2 answer bound code seconds
	answer=$(_front_agent_page "$name") || { _front_failed "$why: no answer"; return; }
	read -r code seconds <<<"$answer"
	bound=$(awk -v s="$seconds" 'BEGIN { print (s < 1.5 + 10) }')
	if [[ $code != 200 ]] || ! cmp -s "$WORKDIR/$name.origin" "$WORKDIR/$name.agent" || ((bound == 0)); then
		_front_failed "$why: status $code after ${seconds}s, $(cmp "$WORKDIR/$name.origin" "$WORKDIR/$name.agent" 2>&1 || true)"
	else
		echo "ok $why: the origin's page, status 200 after ${seconds}s"
	fi
}

front_checks() {
	_front_runtime=$1
	local front_pid=$2 connections others
	shift 2
	_front_status=0
	# --- 2. every shared case through the front -------------------------------------------------
	_front_check --report "$WORKDIR/report.jsonl" "$@" || _front_status=1
	kill -0 "$edge_pid" 2>/dev/null || _front_failed "agentcard edge stopped during the cases"

	# --- 3. fail open -------------------------------------------------------------------------------
	kill -STOP "$edge_pid"
	_front_expect_origin_page marker-gptbot "edge stopped (no answer)"
	kill -CONT "$edge_pid"
	kill -TERM "$edge_pid"
	wait "$edge_pid" 2>/dev/null || true
	forget "$edge_pid"
	_front_expect_origin_page marker-claudebot "edge gone (connection refused)"

	# --- 4. humans never reach the edge ---------------------------------------------------------
	python3 - "$edge_port" "$WORKDIR/tripwire.count" >"$WORKDIR/tripwire.log" 2>&1 <<'PY' &
import socket, sys
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
count = 0
open(sys.argv[2], "w").write("0\n")
print("ready", flush=True)
while True:
    conn, _ = listener.accept()
    count += 1
    open(sys.argv[2], "w").write(f"{count}\n")
    conn.close()
PY
	STARTED_PIDS+=($!)
	for _ in $(seq 100); do
		grep -qx ready "$WORKDIR/tripwire.log" 2>/dev/null && break
		sleep 0.1
	done
	grep -qx ready "$WORKDIR/tripwire.log" || die "the listener in the edge's place did not start"
	# Every case whose User-Agent has no marker (an agent on a host the edge does not list is
	# still sent to the edge: the front does not know the sites file).
	mapfile -t others < <(python3 -c '
import sys
sys.path.insert(0, "recipes/cases")
import harness
suite = harness.Suite()
print(*(name for name, case in suite.cases.items() if not suite.gate.search(case["user_agent"])), sep="\n")')
	((${#others[@]} > 20)) || _front_failed "only ${#others[@]} cases without a marker"
	_front_check --case "${others[@]}" >"$WORKDIR/others.out" || { cat "$WORKDIR/others.out"; _front_status=1; }
	tail -n 1 "$WORKDIR/others.out"
	connections=$(<"$WORKDIR/tripwire.count")
	if ((connections == 0)); then
		echo "ok no connection reached the edge's address during ${#others[@]} cases without a marker"
	else
		_front_failed "$connections connections reached the edge's address during the cases without a marker"
	fi
	# The listener can see a request: an agent's, which it closes unanswered (the origin's page).
	_front_expect_origin_page marker-ccbot "edge closing without an answer"
	connections=$(<"$WORKDIR/tripwire.count")
	((connections >= 1)) || _front_failed "the agent's request did not reach the edge's address"

	kill -0 "$front_pid" 2>/dev/null || _front_failed "the front stopped during the run"
	return "$_front_status"
}
