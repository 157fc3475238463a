#!/usr/bin/env bash
# recipes/front-haproxy/test.sh: the recipe of this folder, HAProxy (Debian's) in front of the
# origin sending only agents to a real `agentcard edge`, run against the shared edge cases
# (recipes/cases/), as recipes/front/test.sh runs them for nginx.
#
#   recipes/front-haproxy/test.sh [--keep] [harness check options, e.g. --case NAME]
#
# Builds the benchmarks' binary (profile bench-lto, scripts/lib/bench.sh's build_profile;
# AGENTCARD_BIN=PATH to use another), installs HAProxy when absent. Starts the harness's origin
# and card stubs, `agentcard edge` and HAProxy with the recipe's haproxy.cfg (its addresses
# substituted, its time-outs as written) on free loopback ports, then checks:
#   1. the recipe's marker list is data/agent-markers-v0.1.txt's;
#   2 to 4. the checks of recipes/cases/front.sh: every shared case through HAProxy, fail
#      open (the edge stopped, the edge gone), no connection to the edge's address for the
#      cases without a marker;
#   5. a Content-Length of 2^64, which HAProxy 2.6 reads as 0, is refused whole: one 400 and
#      the connection closed, the body never read as a request.
# Exit 0 when everything passed. --keep leaves the directory (configuration, logs) for inspection.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
BENCH_NAME=recipes/front-haproxy/test.sh
# shellcheck source=../cases/front.sh
source recipes/cases/front.sh

front_options "$@"

# --- 1. the marker list -----------------------------------------------------------------------
front_markers "$here/haproxy.cfg" \
	'acl agentcard_agent req\.fhdr\(user-agent\) -i -m reg \(\?<!\[A-Za-z0-9_\]\)\(\?:([^)]*)\)'

# --- the processes --------------------------------------------------------------------------
haproxy=$(command -v haproxy || echo /usr/sbin/haproxy)
if [[ ! -x $haproxy ]]; then
	agentcard_apt_install haproxy || die "HAProxy is needed; install Debian's package haproxy"
	haproxy=$(command -v haproxy || echo /usr/sbin/haproxy)
fi
front_start "$keep"

# The recipe with the test's addresses.
sed -e "s|bind :80 |bind 127.0.0.1:$front_port |" \
	-e "s|127.0.0.1:8080 |127.0.0.1:$origin_port |" \
	-e "s|127.0.0.1:8090 |127.0.0.1:$edge_port |" \
	"$here/haproxy.cfg" >"$WORKDIR/haproxy.cfg"
if grep -q -e ':8080 ' -e ':8090 ' -e 'bind :80 ' "$WORKDIR/haproxy.cfg"; then
	die "a placeholder was not substituted (did the recipe change?)"
fi
"$haproxy" -c -q -f "$WORKDIR/haproxy.cfg" || die "HAProxy refused the configuration"
"$haproxy" -db -f "$WORKDIR/haproxy.cfg" >"$WORKDIR/haproxy.log" 2>&1 &
haproxy_pid=$!
STARTED_PIDS+=("$haproxy_pid")
wait_http HAProxy "$haproxy_pid" "$front/human-chrome" "$WORKDIR/haproxy.log"
status=0

# --- 5. HAProxy's misread length: one answer, a 400, then the connection closed ----------------
python3 - "$front_port" <<'PY' || status=1
import socket, sys
hidden = b"GET /human-chrome HTTP/1.1\r\nHost: news.example\r\n\r\n"
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as conn:
    conn.sendall(b"POST /human-chrome HTTP/1.1\r\nHost: news.example\r\n"
                 b"Content-Length: 18446744073709551616\r\n\r\n" + hidden)
    answers = b""
    while piece := conn.recv(65536):
        answers += piece
statuses = [line.split()[1] for line in answers.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
if statuses != [b"400"]:
    sys.exit(f"FAIL a Content-Length of 2^64: answers {statuses}, not one 400")
print("ok a Content-Length of 2^64 is refused whole (one 400, the connection closed)")
PY

# --- 2 to 4: the cases, fail open, humans never at the edge (recipes/cases/front.sh) -----------
front_checks haproxy-front "$haproxy_pid" "${check_args[@]}" || status=1
exit "$status"
