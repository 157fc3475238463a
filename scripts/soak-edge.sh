#!/usr/bin/env bash
# scripts/soak-edge.sh [--minutes N]: `agentcard edge` (the release build) under load for N
# minutes (30 by default, at most 1440), on loopback, watching for crashes, agent pages past
# the budget, and growth.
#
# nginx is the origin (a 40 KB article page) and the card service. Two sites: news.example,
# whose cards nginx answers at once, and hostile.example, whose card calls nginx hands to a
# small stub that in turn answers later than the budget, never answers, resets the
# connection, or sends half a head and resets. wrk alternates 8 agent connections for 3 s
# (GPTBot; one request in four to hostile.example) and 64 human connections for 2 s. Beside
# it, a prober asks for an agent's page every 0.2 s (the two sites in turn) and records its
# time. The edge runs with core dumps on, its core file in a temporary folder.
#
# Every minute: requests done (wrk), the prober's agent pages (count, p99, max, how many past
# budget + 100 ms), the edge's RSS and open descriptors (/proc). Last line: the summary.
# On a crash: the edge's exit, a backtrace of every thread of the core (gdb), the folder
# kept, exit 1. Exit 3 when no crash but agent pages came past budget + 100 ms; 0 otherwise.
# AGENTCARD_EDGE_BUDGET_MS sets the budget (800 by default).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=soak-edge.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

minutes=30
while (($#)); do
	case $1 in
	--minutes)
		minutes=$(knob --minutes "${2:-}" 1440)
		shift 2
		;;
	-h | --help)
		bench_usage "$0"
		exit 0
		;;
	*)
		bench_usage "$0" >&2
		exit 2
		;;
	esac
done
budget=$(knob AGENTCARD_EDGE_BUDGET_MS "${AGENTCARD_EDGE_BUDGET_MS:-800}" 60000)
late_ms=$((budget + 100))

ensure_bench_tools
command -v gdb >/dev/null || agentcard_apt_install gdb || die "gdb is needed (Debian's gdb)"
build_profile --bin agentcard
bench_server_env
edge_bin=$(realpath "$AGENTCARD_BIN")

bench_workdir agentcard-soak-edge
crashed=0
soak_cleanup() {
	stop_started
	if ((crashed)); then
		echo "$BENCH_NAME: kept $WORKDIR (the core and the edge's log)" >&2
	else
		rm -rf "$WORKDIR"
	fi
}
trap soak_cleanup EXIT

read -r origin_port card_port hostile_port edge_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
edge=http://127.0.0.1:$edge_port
gptbot='Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)'
firefox='Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'

# --- the origin and the card service: one nginx ---------------------------------------------
mkdir -p "$WORKDIR/nginx/html" "$WORKDIR/cores"
python3 - "$WORKDIR/nginx/html/article.html" <<'PY'
import sys
filler = "".join(f"<p>Paragraph {n}: the same words again, to make a page of a usual size.</p>\n"
                 for n in range(480))
page = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Soak</title></head><body>"
        f"<header><h1>News</h1></header>\n<article><h2>Story</h2>\n{filler}</article></body></html>\n")
open(sys.argv[1], "w", encoding="utf-8").write(page)
PY
card='<aside class="agentcard" data-card-id="crd_soak" data-brand="Soak &amp; Co" lang="fr"><p>card</p></aside>'
nginx_conf "$WORKDIR/nginx" 1 <<EOF
server {
    listen 127.0.0.1:$origin_port;
    root $WORKDIR/nginx/html;
    location / {
        default_type "text/html; charset=utf-8";
        try_files \$uri \$uri.html =404;
    }
}
server {
    listen 127.0.0.1:$card_port;
    location = /fragment {
        if (\$arg_partner_id = org_hostile) {
            rewrite ^ /hostile last;
        }
        default_type "text/html; charset=UTF-8";
        return 200 '$card';
    }
    location = /hostile {
        internal;
        proxy_pass http://127.0.0.1:$hostile_port\$request_uri;
        proxy_buffering off;
        proxy_read_timeout 30s;
    }
}
EOF

# The hostile card service: each connection gets the next of four behaviours.
python3 - "$hostile_port" "$budget" "$card" >"$WORKDIR/hostile.log" 2>&1 <<'PY' &
import itertools, socket, struct, sys, threading, time
port, budget, card = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
turns = itertools.cycle(["late", "silent", "reset", "half-head"])
lock = threading.Lock()

def reset(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()

def serve(conn, turn):
    conn.settimeout(30)
    try:
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(4096)
            if not data:
                return conn.close()
            head += data
        if turn == "late":
            time.sleep((budget + 300) / 1000)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(card), card))
            conn.close()
        elif turn == "silent":
            time.sleep(20)
            conn.close()
        elif turn == "reset":
            reset(conn)
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Le")
            reset(conn)
    except OSError:
        conn.close()

listener = socket.create_server(("127.0.0.1", port), backlog=1024)
while True:
    conn, _ = listener.accept()
    with lock:
        turn = next(turns)
    threading.Thread(target=serve, args=(conn, turn), daemon=True).start()
PY
STARTED_PIDS+=($!)
start_nginx_in nginx_pid "$WORKDIR/nginx" nginx "http://127.0.0.1:$origin_port/article"

# --- the edge, core dumps on, its working directory the core's folder -------------------------
printf '%s\n' '[[site]]' 'domain = "news.example"' 'partner_id = "org_news"' \
	'fragment_id = "frg_news"' 'lang = "fr"' '[[site]]' 'domain = "hostile.example"' \
	'partner_id = "org_hostile"' 'fragment_id = "frg_hostile"' 'lang = "fr"' >"$WORKDIR/sites.toml"
(
	cd "$WORKDIR/cores"
	ulimit -c unlimited || echo "$BENCH_NAME: warning: no core dumps (ulimit -c unlimited refused)" >&2
	exec env AGENTCARD_EDGE_KEY="svc_live_$(printf '0%.0s' {1..40})" \
		AGENTCARD_EDGE_LISTEN="127.0.0.1:$edge_port" \
		AGENTCARD_EDGE_ORIGIN="http://127.0.0.1:$origin_port" \
		AGENTCARD_EDGE_SERVICE="http://127.0.0.1:$card_port" \
		AGENTCARD_EDGE_SITES="$WORKDIR/sites.toml" AGENTCARD_EDGE_BUDGET_MS="$budget" \
		"$edge_bin" edge
) >"$WORKDIR/edge.log" 2>&1 &
edge_pid=$!
STARTED_PIDS+=("$edge_pid")
wait_http "agentcard edge" "$edge_pid" "$edge/article" "$WORKDIR/edge.log"
page=$(curl -fsS -H 'Host: news.example' -A "$gptbot" "$edge/article") || page=
if [[ $page != *'data-card-id="crd_soak"'* ]]; then
	tail -n 20 "$WORKDIR/edge.log" >&2
	die "the edge placed no card in news.example's page (its log above)"
fi

# --- the prober ------------------------------------------------------------------------------
# One line per agent page: end time (s), host, status, seconds.
probe() {
	local turn=0 host answer
	while :; do
		host=news.example
		((turn++ % 2 == 0)) || host=hostile.example
		answer=$(curl -s -o /dev/null --max-time 30 -w '%{http_code} %{time_total}' \
			-H "Host: $host" -A "$gptbot" "$edge/article") || true
		printf '%s %s %s\n' "$(date +%s.%N)" "$host" "${answer:-000 30}" >>"$WORKDIR/probe.txt"
		sleep 0.2
	done
}
probe &
STARTED_PIDS+=($!)

cat >"$WORKDIR/agents.lua" <<EOF
local n = 0
request = function()
    n = n + 1
    local host = (n % 4 == 0) and "hostile.example" or "news.example"
    return wrk.format("GET", "/article", { ["Host"] = host, ["User-Agent"] = "$gptbot" })
end
EOF

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$edge_pid/status" 2>/dev/null || echo 0; }
open_fds() { find "/proc/$edge_pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f MB", k / 1024 }'; }

# probe_stats SINCE [HOST]: "pages p99_ms max_ms late" of the prober's pages (of HOST) ended
# since SINCE.
probe_stats() {
	touch "$WORKDIR/probe.txt"
	awk -v since="$1" -v host="${2:-}" '$1 >= since && (host == "" || $2 == host) { printf "%.0f\n", $4 * 1000 }' \
		"$WORKDIR/probe.txt" | sort -n |
		awk -v late="$late_ms" '
			{ t[++n] = $1; if ($1 > late) over++ }
			END {
				if (n == 0) { print "0 0 0 0"; exit }
				i = int(n * 0.99); if (i < n * 0.99) i++; if (i < 1) i = 1
				printf "%d %d %d %d\n", n, t[i], t[n], over
			}'
}

# --- the load, reported every minute ----------------------------------------------------------
machine
echo "budget ${budget} ms: an agent page is late past ${late_ms} ms; ${minutes} min of load"
started=$(date +%s)
ends=$((started + minutes * 60))
minute_start=$started
minute=0
requests=0
minute_requests=0
rss_first=$(rss_kb)
rss_last=$rss_first
phase=0
report() {
	local pages p99 max over
	read -r pages p99 max over < <(probe_stats "$minute_start")
	minute=$((minute + 1))
	printf '[minute %d] requests %d (total %d) | agent pages %d: p99 %d ms, max %d ms, %d past %d ms | edge RSS %s, %d descriptors\n' \
		"$minute" "$minute_requests" "$requests" "$pages" "$p99" "$max" "$over" "$late_ms" \
		"$(mb "$(rss_kb)")" "$(open_fds)"
	minute_start=$(date +%s)
	minute_requests=0
}
while (($(date +%s) < ends)) && kill -0 "$edge_pid" 2>/dev/null; do
	if ((phase % 2 == 0)); then
		args=(-t1 -c8 -d3s -s "$WORKDIR/agents.lua")
	else
		args=(-t2 -c64 -d2s -H 'Host: news.example' -H "User-Agent: $firefox")
	fi
	timeout 40 setsid -w wrk "${args[@]}" "$edge/article" >"$WORKDIR/wrk.out" 2>&1 || true
	done_now=$(parse_wrk "$WORKDIR/wrk.out" | cut -d ' ' -f 1)
	requests=$((requests + done_now))
	minute_requests=$((minute_requests + done_now))
	phase=$((phase + 1))
	# The last value seen alive: after a crash /proc has none (0).
	rss_now=$(rss_kb)
	((rss_now == 0)) || rss_last=$rss_now
	if (($(date +%s) - minute_start >= 60)); then report; fi
done
sleep 1
alive=1
kill -0 "$edge_pid" 2>/dev/null || alive=0
if ((alive)); then
	rss_last=$(rss_kb)
	(($(date +%s) - minute_start >= 10)) && report
fi

# --- a crash: its backtrace ----------------------------------------------------------------
if ((!alive)); then
	crashed=1
	code=0
	wait "$edge_pid" 2>/dev/null || code=$?
	forget "$edge_pid"
	echo "agentcard edge exited after $(($(date +%s) - started)) s, status $code$( ((code > 128)) && echo " (signal $((code - 128)))")"
	tail -n 20 "$WORKDIR/edge.log"
	core=$(find "$WORKDIR/cores" -maxdepth 1 -name 'core*' -type f -print -quit)
	if [[ -n $core ]]; then
		echo "core: $core; every thread's backtrace:"
		gdb -q -batch -ex 'thread apply all bt' "$edge_bin" "$core" 2>&1 | tee "$WORKDIR/backtrace.txt"
	else
		echo "no core file in $WORKDIR/cores (core pattern: $(cat /proc/sys/kernel/core_pattern))"
	fi
fi

read -r pages _ _ over < <(probe_stats 0)
by_site=()
for host in news.example hostile.example; do
	read -r site_pages _ site_max site_over < <(probe_stats 0 "$host")
	by_site+=("$host $site_over of $site_pages, max $site_max ms")
done
echo "summary: ${minutes} min, $requests requests, crashes $crashed, agent pages past ${late_ms} ms: $over of $pages ($(IFS=';'; echo "${by_site[*]}" | sed 's/;/; /g')), edge RSS first $(mb "$rss_first"), last $(mb "$rss_last")"
((crashed)) && exit 1
((over > 0)) && exit 3
exit 0
