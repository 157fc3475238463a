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
# shellcheck source=../cases/front.sh
source recipes/cases/front.sh

front_options "$@"

# --- 1. the marker list -----------------------------------------------------------------------
front_markers "$here/agentcard-front.conf" \
	'map \$http_user_agent \$agentcard_front_agent \{.*?"~\*\(\?<!\[A-Za-z0-9_\]\)\(\?:([^)]*)\)'

# --- the processes --------------------------------------------------------------------------
if ! nginx_binary >/dev/null; then
	agentcard_apt_install nginx || die "nginx is needed; install Debian's package nginx"
fi
front_start "$keep"

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

# --- 2 to 4: the cases, fail open, humans never at the edge (recipes/cases/front.sh) -----------
front_checks nginx-front "$nginx_pid" "${check_args[@]}"
