#!/usr/bin/env bash
# recipes/front/test.sh: the recipe of this folder, nginx (Debian's) in front of the origin sending
# only agents to a real `agentcard edge`, run against the shared edge cases (recipes/cases/).
#
#   recipes/front/test.sh [--keep] [harness check options, e.g. --case NAME]
#
# Builds the benchmarks' binary (profile bench-lto, scripts/lib/bench.sh's build_profile;
# AGENTCARD_BIN=PATH to use another), installs nginx when absent. Starts the harness's origin
# and card stubs, `agentcard edge` and nginx with the recipe's files (its addresses
# substituted, its time-outs as written) on free loopback ports, then checks:
#   1. the recipe's marker list is data/agent-markers-v0.1.txt's;
#   2. every shared case through nginx: each marker's page gets the card (through the edge),
#      every other request is the origin's answer byte for byte;
#   3. fail open: the edge stopped (SIGSTOP: no answer) gives an agent the origin's page after
#      the recipe's time-out; the edge gone (connection refused) gives it at once;
#   4. humans never reach the edge: a listener in the edge's place counts no connection while
#      every case without a marker in its User-Agent runs again, and counts the one agent
#      request sent then.
# Exit 0 when everything passed. --keep leaves the directory (configuration, logs) for inspection.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
BENCH_NAME=recipes/front/test.sh
# shellcheck source=../../scripts/lib/bench.sh
source scripts/lib/bench.sh
# shellcheck source=../../scripts/lib/ports.sh
source scripts/lib/ports.sh

keep=
check_args=()
while (($#)); do
	case $1 in
	--keep) keep=1; shift ;;
	*) check_args+=("$1"); shift ;;
	esac
done

# --- 1. the marker list -----------------------------------------------------------------------
python3 - "$here/agentcard-front.conf" data/agent-markers-v0.1.txt <<'PY'
import re, sys
conf, data = (open(path, encoding="utf-8").read() for path in sys.argv[1:])
markers = [line.split()[1] for line in data.splitlines()
           if line.strip() and not line.startswith("#") and not line.startswith("version:")]
found = re.search(r'map \$http_user_agent \$agentcard_front_agent \{.*?"~\*\(\?<!\[A-Za-z0-9_\]\)\(\?:([^)]*)\)', conf, re.S)
spelled = found.group(1).split("|") if found else []
if [m.lower() for m in spelled] != [m.lower() for m in markers]:
    sys.exit(f"recipes/front: the gate's regex spells {spelled}, the data file lists {markers}")
print(f"ok the gate lists the {len(markers)} markers of the data file")
PY

# --- the processes --------------------------------------------------------------------------
if [[ -z ${AGENTCARD_BIN:-} ]]; then
	build_profile --bin agentcard
fi
[[ -x $AGENTCARD_BIN ]] || die "no agentcard binary at $AGENTCARD_BIN"
if ! nginx_binary >/dev/null; then
	agentcard_apt_install nginx || die "nginx is needed; install Debian's package nginx"
fi
command -v curl >/dev/null || agentcard_apt_install curl || die "curl is needed"

bench_workdir agentcard-edge-front
if [[ -n $keep ]]; then
	trap 'stop_started; echo "recipes/front/test.sh: kept $WORKDIR" >&2' EXIT
fi
budget=800

read -r origin_port card_port edge_port front_port < <(free_ports 4)
origin=http://127.0.0.1:$origin_port
front=http://127.0.0.1:$front_port

python3 recipes/cases/harness.py stubs --origin-port "$origin_port" --card-port "$card_port" \
	--markup none --budget-ms "$budget" >"$WORKDIR/stubs.out" 2>"$WORKDIR/stubs.log" &
STARTED_PIDS+=($!)
wait_http "the harness stubs" "$!" "$origin/human-chrome" "$WORKDIR/stubs.log"

# The shared cases' site and key (recipes/cases/cases.json).
printf '[[site]]\ndomain = "news.example"\npartner_id = "org_edge"\nfragment_id = "frg_edge"\nlang = "fr"\n' \
	>"$WORKDIR/sites.toml"
start_edge() {
	env -u RUST_LOG AGENTCARD_EDGE_KEY=svc_live_edgetestkey0123456789 \
		AGENTCARD_EDGE_LISTEN="127.0.0.1:$edge_port" AGENTCARD_EDGE_ORIGIN="$origin" \
		AGENTCARD_EDGE_SERVICE="http://127.0.0.1:$card_port" AGENTCARD_EDGE_SITES="$WORKDIR/sites.toml" \
		AGENTCARD_EDGE_BUDGET_MS=$budget "$AGENTCARD_BIN" edge >>"$WORKDIR/edge.log" 2>&1 &
	edge_pid=$!
	STARTED_PIDS+=("$edge_pid")
	wait_http "agentcard edge" "$edge_pid" "http://127.0.0.1:$edge_port/human-chrome" "$WORKDIR/edge.log"
}
start_edge

# The recipe with the test's addresses; the example site answers every Host (the cases use
# unlisted hosts too).
sed -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$origin_port;|" \
	-e "s|server 127.0.0.1:8090;|server 127.0.0.1:$edge_port;|" \
	"$here/agentcard-front.conf" >"$WORKDIR/agentcard-front.conf"
sed -e "s|listen 80;|listen 127.0.0.1:$front_port default_server;|" \
	"$here/example-site.conf" >"$WORKDIR/site.conf"
if grep -q -e ':8080;' -e ':8090;' -e 'listen 80;' "$WORKDIR/agentcard-front.conf" "$WORKDIR/site.conf"; then
	die "a placeholder was not substituted (did the recipe change?)"
fi
printf 'include %s/agentcard-front.conf;\ninclude %s/site.conf;\n' "$WORKDIR" "$WORKDIR" |
	nginx_conf "$WORKDIR" 1
"$(nginx_binary)" -t -q -p "$WORKDIR" -c "$WORKDIR/nginx.conf" -e "$WORKDIR/error.log" ||
	die "nginx refused the configuration"
start_nginx_in nginx_pid "$WORKDIR" nginx "$front/human-chrome"

status=0
failed() {
	echo "FAIL $*"
	status=1
}

# --- 2. every shared case through nginx ---------------------------------------------------------
check() {
	python3 recipes/cases/harness.py check --runtime nginx-front --edge "$front" --origin "$origin" \
		--card "http://127.0.0.1:$card_port" "$@"
}
check --report "$WORKDIR/report.jsonl" "${check_args[@]}" || status=1
kill -0 "$edge_pid" 2>/dev/null || failed "agentcard edge stopped during the cases"

# agent_page NAME: one agent request for case NAME through nginx; prints "status seconds" and
# writes the body to $WORKDIR/NAME.agent; the origin's body for the same request to NAME.origin.
gptbot='Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)'
agent_page() {
	curl -sS -o "$WORKDIR/$1.origin" -H 'Host: news.example' -A "$gptbot" "$origin/$1"
	curl -sS -o "$WORKDIR/$1.agent" --max-time 30 -w '%{http_code} %{time_total}\n' \
		-H 'Host: news.example' -A "$gptbot" "$front/$1"
}
# The origin's page, not composed, within the recipe's time-out and a generous margin.
expect_origin_page() {
	local name=$1 why=$2 answer bound
	answer=$(agent_page "$name") || { failed "$why: no answer"; return; }
	read -r code seconds <<<"$answer"
	bound=$(awk -v s="$seconds" 'BEGIN { print (s < 1.5 + 10) }')
	if [[ $code != 200 ]] || ! cmp -s "$WORKDIR/$name.origin" "$WORKDIR/$name.agent" || ((bound == 0)); then
		failed "$why: status $code after ${seconds}s, $(cmp "$WORKDIR/$name.origin" "$WORKDIR/$name.agent" 2>&1 || true)"
	else
		echo "ok $why: the origin's page, status 200 after ${seconds}s"
	fi
}

# --- 3. fail open ----------------------------------------------------------------------------------
kill -STOP "$edge_pid"
expect_origin_page marker-gptbot "edge stopped (no answer)"
kill -CONT "$edge_pid"
kill -TERM "$edge_pid"
wait "$edge_pid" 2>/dev/null || true
forget "$edge_pid"
expect_origin_page marker-claudebot "edge gone (connection refused)"

# --- 4. humans never reach the edge ------------------------------------------------------------
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
# Every case whose User-Agent has no marker (an agent on a host the edge does not list is still
# sent to the edge: nginx does not know the sites file).
mapfile -t others < <(python3 -c '
import sys
sys.path.insert(0, "recipes/cases")
import harness
suite = harness.Suite()
print(*(name for name, case in suite.cases.items() if not suite.gate.search(case["user_agent"])), sep="\n")')
((${#others[@]} > 20)) || failed "only ${#others[@]} cases without a marker"
check --case "${others[@]}" >"$WORKDIR/others.out" || { cat "$WORKDIR/others.out"; status=1; }
tail -n 1 "$WORKDIR/others.out"
connections=$(<"$WORKDIR/tripwire.count")
if ((connections == 0)); then
	echo "ok no connection reached the edge's address during ${#others[@]} cases without a marker"
else
	failed "$connections connections reached the edge's address during the cases without a marker"
fi
# The listener can see a request: an agent's, which it closes unanswered (the origin's page).
expect_origin_page marker-ccbot "edge closing without an answer"
connections=$(<"$WORKDIR/tripwire.count")
((connections >= 1)) || failed "the agent's request did not reach the edge's address"

kill -0 "$nginx_pid" 2>/dev/null || failed "nginx stopped during the run"
exit "$status"
