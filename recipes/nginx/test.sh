#!/usr/bin/env bash
# recipes/nginx/test.sh: the nginx SSI recipe of this folder, run by the real
# nginx (Debian's), against the shared edge cases (recipes/cases/harness.py).
#
#   recipes/nginx/test.sh [--budget-ms N] [--keep] [harness check options, e.g. --case NAME]
#
# Installs nginx when absent. Starts the harness's origin and card stubs and
# one nginx (in the foreground, its prefix, logs and temporary files in a
# fresh directory, on free loopback ports) with the recipe's files, the
# addresses, key and budget of the test site substituted; runs every case
# that applies to nginx, then checks that each fail-open case left its cause
# word in the recipe's log. Exit 0 when everything passed. --keep leaves the
# directory (configuration and logs) for inspection.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
budget=800
keep=
check_args=()
while (($#)); do
	case $1 in
	--budget-ms) budget=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	*) check_args+=("$1"); shift ;;
	esac
done

fail() {
	printf 'recipes/nginx/test.sh: %s\n' "$*" >&2
	exit 1
}

nginx_bin=$(PATH="$PATH:/usr/sbin:/sbin" command -v nginx || true)
if [[ -z $nginx_bin ]]; then
	# shellcheck source=../../scripts/lib/apt.sh
	source "$root/scripts/lib/apt.sh"
	agentcard_apt_install nginx || fail "nginx is needed; install Debian's package nginx"
	nginx_bin=$(PATH="$PATH:/usr/sbin:/sbin" command -v nginx) || fail "nginx installed but not found"
fi
command -v python3 >/dev/null || fail "python3 is needed"

work=$(mktemp -d "${TMPDIR:-/tmp}/agentcard-edge-nginx.XXXXXX")
# nginx's workers run as `nobody` when the master is root: let them reach
# their temporary directories.
chmod 755 "$work"
stubs_pid=
nginx_pid=
cleanup() {
	local status=$?
	if [[ -n $nginx_pid ]] && kill -0 "$nginx_pid" 2>/dev/null; then
		kill -QUIT "$nginx_pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$nginx_pid" 2>/dev/null || true
	fi
	if [[ -n $stubs_pid ]] && kill -0 "$stubs_pid" 2>/dev/null; then
		kill -TERM "$stubs_pid" 2>/dev/null || true
		wait "$stubs_pid" 2>/dev/null || true
	fi
	if [[ -n $keep ]]; then
		echo "recipes/nginx/test.sh: kept $work" >&2
	else
		rm -rf "$work"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Free loopback ports (scripts/lib/ports.sh); a server that loses one to another
# process is started again on new ones.
# shellcheck source=../../scripts/lib/ports.sh
source "$root/scripts/lib/ports.sh"

# The stubs: origin pages with SSI markup at {{include}}, and the card stub.
start_stubs() {
	read -r origin_port card_port < <(free_ports 2)
	rm -f "$work/stubs.ready"
	mkfifo "$work/stubs.ready"
	python3 "$root/recipes/cases/harness.py" stubs --origin-port "$origin_port" --card-port "$card_port" \
		--markup ssi --budget-ms "$budget" >"$work/stubs.ready" 2>"$work/stubs.log" &
	stubs_pid=$!
	if timeout 30 head -n1 "$work/stubs.ready" | grep -qx ready; then
		# Keep reading the stubs' stdout so that they never block on a full pipe.
		cat "$work/stubs.ready" >/dev/null &
		return 0
	fi
	kill -TERM "$stubs_pid" 2>/dev/null || true
	wait "$stubs_pid" 2>/dev/null || true
	stubs_pid=
	return 1
}
for attempt in 1 2 3; do
	start_stubs && break
	cat "$work/stubs.log" >&2
	((attempt < 3)) || fail "the harness stubs did not start"
done

# The recipe, with the test site's values (recipes/cases/cases.json's `site`) in its
# {{…}} placeholders, and its addresses, key, budget and paths.
conf=$work/conf
mkdir -p "$conf" "$work/logs" "$work/tmp"
site_values=(-e "s|{{domain}}|news.example|g" -e "s|{{partner_id}}|org_edge|"
	-e "s|{{fragment_id}}|frg_edge|" -e "s|{{lang}}|fr|")
sed "${site_values[@]}" -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$origin_port;|" \
	-e "s|server \"{{service_host}}:443\";|server 127.0.0.1:$card_port;|" \
	"$here/agentcard-http.conf" >"$conf/agentcard-http.conf"
# The card stub speaks plain http: the https and certificate lines go.
sed -e "s|proxy_pass https://agentcard_service/|proxy_pass http://agentcard_service/|" \
	-e "s|proxy_set_header Host \"{{service_host}}\";|proxy_set_header Host 127.0.0.1:$card_port;|" \
	-e "/^ *proxy_ssl_/d" \
	-e "s|/var/log/nginx/|$work/logs/|" \
	-e "s|/etc/nginx/agentcard-key.conf|$conf/agentcard-key.conf|" \
	-e "s|_timeout 800ms;|_timeout ${budget}ms;|" \
	-e "s|^#abc ||" -e "s|/etc/nginx/abc.txt|$conf/abc.txt|" \
	"$here/agentcard-server.conf" >"$conf/agentcard-server.conf"
# Rule 7's file, with a comment and a RESELLER line.
printf '# abc.txt of news.example\nagentcard.example.net, acc_edge, DIRECT\nads.example, 42, RESELLER # resold\n' \
	>"$conf/abc.txt"
sed -e 's|svc_live_REPLACE_WITH_YOUR_KEY|svc_live_edgetestkey0123456789|' \
	"$here/agentcard-key.conf.example" >"$conf/agentcard-key.conf"
cat >"$conf/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log info;
events {
    worker_connections 1024;
}
http {
    access_log $work/logs/access.log;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    include $conf/agentcard-http.conf;
    include $conf/site.conf;
}
EOF

site_conf() {
	sed "${site_values[@]}" -e "s|listen 80;|listen 127.0.0.1:$edge_port default_server;|" \
		-e "s|/etc/nginx/agentcard-server.conf|$conf/agentcard-server.conf|" \
		"$here/example-site.conf" >"$conf/site.conf"
}
edge_port=$(free_ports 1)
site_conf
for file in agentcard-http.conf agentcard-server.conf site.conf agentcard-key.conf; do
	# A substitution that did not happen would test something else.
	if grep -v '^[[:space:]]*#' "$conf/$file" | grep -q -e '8080;' -e '{{' \
		-e '/etc/nginx/' -e '/var/log/' -e 'REPLACE_WITH' -e 'listen 80;'; then
		fail "$file: a placeholder was not substituted (did the recipe change?)"
	fi
done
"$nginx_bin" -t -q -p "$work" -c "$conf/nginx.conf" || fail "nginx refused the configuration"

# nginx in the foreground (daemon off), as a child of this script.
start_nginx() {
	"$nginx_bin" -p "$work" -c "$conf/nginx.conf" 2>>"$work/logs/error.log" &
	nginx_pid=$!
	for _ in $(seq 100); do
		if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 0.2).close()" \
			"$edge_port" 2>/dev/null; then
			return 0
		fi
		kill -0 "$nginx_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -QUIT "$nginx_pid" 2>/dev/null || true
	wait "$nginx_pid" 2>/dev/null || true
	nginx_pid=
	return 1
}
for attempt in 1 2 3; do
	start_nginx && break
	tail -n 5 "$work/logs/error.log" >&2
	((attempt < 3)) || fail "nginx did not start"
	edge_port=$(free_ports 1)
	site_conf
done

status=0
python3 "$root/recipes/cases/harness.py" check --runtime nginx \
	--edge "http://127.0.0.1:$edge_port" --origin "http://127.0.0.1:$origin_port" \
	--card "http://127.0.0.1:$card_port" --report "$work/report.jsonl" "${check_args[@]}" || status=$?
for pid_name in "$stubs_pid:the harness stubs" "$nginx_pid:nginx"; do
	if ! kill -0 "${pid_name%%:*}" 2>/dev/null; then
		echo "recipes/nginx/test.sh: ${pid_name#*:} stopped during the run" >&2
		status=1
	fi
done

# Rule 7: /abc.txt is the file, text/plain, to an agent as to anyone.
python3 - "$edge_port" "$conf/abc.txt" <<'PY' || status=1
import http.client, sys
port, path = int(sys.argv[1]), sys.argv[2]
want = open(path, "rb").read()
for agent in ("Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
              "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/abc.txt", headers={"Host": "news.example", "User-Agent": agent})
    answer = conn.getresponse()
    body, ctype = answer.read(), answer.getheader("Content-Type")
    if (answer.status, ctype, body) != (200, "text/plain", want):
        print(f"FAIL abc.txt for {agent!r}: {answer.status} {ctype!r} {body[:80]!r}")
        sys.exit(1)
print("ok abc.txt")
PY

# Rule 5: each fail-open case left its cause word in the recipe's log, on a
# line of its request. (no_article cannot be: a page without <article> has no
# include, so nginx never sees that a card could have been placed.)
if [[ -s $work/report.jsonl ]]; then
	python3 - "$work/report.jsonl" "$work/logs/agentcard.log" <<'PY' || status=1
import json, re, sys
report, log = sys.argv[1], sys.argv[2]
try:
    with open(log, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
except FileNotFoundError:
    lines = []
missing = []
checked = 0
for row in map(json.loads, open(report, encoding="utf-8")):
    if not row["agent"] or row["cause"] in (None, "no_article"):
        continue
    checked += 1
    request = re.compile(r'uri="/' + re.escape(row["case"]) + r'[/?"]')
    if not any(request.search(line) and f" cause={row['cause']} " in line for line in lines):
        missing.append(f"{row['case']} (cause={row['cause']})")
for name in missing:
    print(f"FAIL {name}: no such line in the recipe's log")
print(f"log: {checked - len(missing)} of {checked} fail-open causes logged")
sys.exit(1 if missing else 0)
PY
fi
exit "$status"
