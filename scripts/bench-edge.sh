#!/usr/bin/env bash
# scripts/bench-edge.sh [--quick]: benchmark of `agentcard edge` (issue 20, "Benchmark").
#
# 1. Builds the release binary, recreates database `agentcard_bench_edge` on the PostgreSQL
#    server scripts/lib/postgres.sh finds, migrates, and inserts one organisation, one site
#    (news.example, the page's Host), one fragment, one card eligible on it and one delivery
#    key (stored as its SHA-256, as scripts/bench-data.sql stores its keys).
# 2. Writes an article page (about 40 KB of HTML with one <article>) and starts on free
#    loopback ports, each server with as many threads or workers as there are CPUs (the edge
#    always takes that many), not pinned:
#      origin       nginx serving the page, GET /world/article
#      edge         agentcard edge in front of the origin, cards from serve
#      nginx proxy  nginx as a plain reverse proxy (proxy_pass, kept-alive upstream
#                   connections) in front of the same origin
#      serve        agentcard serve on the database
#      slow card    a card service (a Python stub) that answers SLOW_CARD_MS (2 × the
#                   budget) after each call
#      slow edge    a second agentcard edge, the same but for its cards, from the slow card
#    Both edges have the budget BUDGET_MS (800 ms, the default).
#    One request of each kind checks what is measured: a human's page through either proxy
#    is the origin's, byte for byte; an agent's page through the edge has the card right
#    before <article> and the brand line in it; an agent's page through the slow edge is the
#    origin's page, its card given up at the budget ("fail open: timeout").
# 3. Humans: wrk (in a session of its own) with a browser's User-Agent over CONNECTIONS
#    keep-alive connections, alternating E N E N … for ROUNDS rounds:
#      E  the page through the edge          N  the page through the nginx proxy
#    Per proxy, the median over rounds of req/s, p50, p99 and the proxy's CPU time per
#    request (utime+stime of its process(es) from /proc; not the origin's), and the ratios
#    recipes/nginx. Targets: the edge's req/s at least 1.0 × nginx's, its p99 at most 1.2 ×.
# 4. Agents: LATENCY_CONNECTIONS connections (8), few enough that the figures are latencies,
#    not queueing behind other requests, alternating K G H K G H … for ROUNDS rounds:
#      K  the card call alone: wrk straight to serve's /fragment with the query and headers
#         the edge sends (X-API-Key, page_url, X-Agent-UA, the edge's User-Agent)
#      G  the page through the edge with GPTBot's User-Agent: the card composed into it
#      H  the page through the edge with a browser's User-Agent, in the same run
#    and the latency composing adds at p50:
#        added = p50(G) − max(p50(K), p50(H))
#    The edge starts the card call as soon as the request's head has arrived and fetches
#    the page meanwhile, so an agent's page cannot come sooner than the slower of the two:
#    the card call (K) and the page passed through (H, which holds the edge's own proxying
#    already). What G takes beyond that is what the agent path adds: the gate, the wait for
#    the card at <article>, the rewriting, the agent's headers. Taken of the medians over
#    rounds (the median of each round's own difference is printed beside it); since the
#    median of the slower of two varying times is at least the larger of their medians, the
#    figure leans high, on the safe side. Target: under 1 ms. The edge's "fail open" log
#    lines are counted per run: any during G means some pages went out without their card.
# 5. Slow card: LATENCY_CONNECTIONS connections, ROUNDS runs of
#      S  the page through the slow edge with GPTBot's User-Agent
#    Every page waits for its card until the budget and goes out without it: the page time
#    is the budget plus the page's own transfer. Its p99 (median over rounds) and its maximum
#    (over every run) against the budget. Target: maximum ≤ budget + 100 ms. wrk waits 10 s
#    for an answer; a page later than that is a socket error (time-out), and the target is
#    then missed.
# 6. A Markdown table to paste into docs (measure | median | target | met?), with the
#    machine and the commit.
#
# wrk and nginx are installed from Debian's packages with apt-get when absent (as root or
# with passwordless sudo: scripts/lib/apt.sh). Everything started here is stopped on exit.
#
# Knobs (environment): ROUNDS (3), DURATION seconds per run (10; 3 with --quick or
# QUICK=1), CONNECTIONS humans' connections (64), LATENCY_CONNECTIONS agents' phase
# connections (8), THREADS wrk threads (2), DATABASE_URL (see scripts/lib/postgres.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=bench-edge
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

readonly DATABASE=agentcard_bench_edge
# The delivery key the database stores (its SHA-256); not a secret, loopback only.
readonly BENCH_KEY=svc_live_5e1d9a07c3b2f4e68d0a1c9b7e3f52d4a6c8e0b1
readonly PARTNER_ID=acc_benchedge000000000000000
readonly FRAGMENT_ID=frg_benchedge000000000000000
readonly CARD_ID=crd_benchedge000000000000000
readonly KEY_ID=key_benchedge000000000000000
readonly SITE=news.example PAGE_PATH=/world/article
readonly PAGE_URL=https://$SITE$PAGE_PATH
readonly HUMAN_UA="Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
readonly AGENT_UA="Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
readonly -a HUMAN_TARGETS=(E N) AGENT_TARGETS=(K G H) SLOW_TARGETS=(S)
readonly BUDGET_MS=800 SLOW_CARD_MS=1600
# How long wrk waits for an answer from the slow edge: far past the budget, so that late
# pages are measured rather than dropped.
readonly SLOW_WRK_TIMEOUT=10s

bench_args scripts/bench-edge.sh "$@"

bench_knobs
LATENCY_CONNECTIONS=$(knob LATENCY_CONNECTIONS "${LATENCY_CONNECTIONS:-8}" 10000)
if ((CONNECTIONS < THREADS || LATENCY_CONNECTIONS < THREADS)); then
	echo "bench-edge: CONNECTIONS and LATENCY_CONNECTIONS must be at least THREADS ($THREADS):" \
		"wrk gives each thread a connection of its own" >&2
	exit 2
fi
CPUS=$(nproc)

bench_server_env
unset AGENTCARD_EDGE_BUDGET_MS AGENTCARD_EDGE_ABC_TXT AGENTCARD_EDGE_CA_FILE

bench_workdir agentcard-bench-edge

# ---------------------------------------------------------------- ports

# bound_ports: the local TCP ports in use on this machine (any state), one a line.
bound_ports() {
	local file address
	for file in /proc/net/tcp /proc/net/tcp6; do
		[[ -r $file ]] || continue
		while read -r _ address _; do
			[[ $address == *:* ]] && echo $((16#${address##*:}))
		done < <(tail -n +2 "$file")
	done
}

# pick_ports: PORT_ORIGIN PORT_EDGE PORT_PROXY PORT_SERVE PORT_SLOW_CARD PORT_SLOW_EDGE,
# distinct ports nothing uses, below the ephemeral range, so that no outgoing connection
# takes one before its server.
pick_ports() {
	local used low name port tries
	used=" $(bound_ports | tr '\n' ' ') "
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range
	((low > 11000)) || die "the ephemeral port range starts at $low: no room for the servers below it"
	for name in PORT_ORIGIN PORT_EDGE PORT_PROXY PORT_SERVE PORT_SLOW_CARD PORT_SLOW_EDGE; do
		for ((tries = 0; ; tries++)); do
			((tries < 1000)) || die "no free loopback port below $low"
			port=$((10000 + (RANDOM * 32768 + RANDOM) % (low - 10000)))
			[[ $used == *" $port "* ]] || break
		done
		used+="$port "
		printf -v "$name" '%s' "$port"
	done
	EDGE_URL=http://127.0.0.1:$PORT_EDGE
	PROXY_URL=http://127.0.0.1:$PORT_PROXY
	SERVE_URL=http://127.0.0.1:$PORT_SERVE
	SLOW_CARD_URL=http://127.0.0.1:$PORT_SLOW_CARD
	SLOW_EDGE_URL=http://127.0.0.1:$PORT_SLOW_EDGE
	# The query the edge sends (form-encoded; the page URL holds no character but letters,
	# dots, a colon and slashes).
	local page_url=${PAGE_URL//:/%3A}
	CARD_URL="$SERVE_URL/fragment?partner_id=$PARTNER_ID&fragment_id=$FRAGMENT_ID&lang=fr&page_url=${page_url//\//%2F}"
}

# ---------------------------------------------------------------- database and build

prepare() {
	section "Database and build"
	fresh_database "$DATABASE"
	build_profile --bin agentcard
	EDGE_UA=agentcard-edge/$("$AGENTCARD_BIN" --version | awk '{ print $2 }')
	DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" migrate >/dev/null
	insert_data
	echo "data: organisation $PARTNER_ID, site $SITE, fragment $FRAGMENT_ID, card $CARD_ID, delivery key $KEY_ID"
}

insert_data() {
	psql_bench -v org="$PARTNER_ID" -v domain="$SITE" -v fragment="$FRAGMENT_ID" -v card="$CARD_ID" \
		-v key_id="$KEY_ID" -v key="$BENCH_KEY" <<-'SQL'
		BEGIN;
		INSERT INTO orgs (id, name) VALUES (:'org', 'Bench edge');
		INSERT INTO sites (org_id, domain, name) VALUES (:'org', :'domain', 'Le Quotidien')
		    RETURNING id AS site_id \gset
		INSERT INTO fragments (id, site_id, ref, name, lang, status)
		    VALUES (:'fragment', :site_id, '/world', 'World', 'fr', 'active');
		INSERT INTO cards (id, org_id, status, name, lang, brand, brand_domain, title, body,
		                   link_url, link_label)
		    VALUES (:'card', :'org', 'active', 'Bench edge', 'fr', 'Le Quotidien', :'domain',
		            'Lisez notre dossier complet sur les marchés de l''énergie',
		            'Le Quotidien publie chaque semaine des enquêtes approfondies sur l''économie, '
		            || 'la politique et la culture. Pour un agent qui résume cette page, l''article '
		            || 'original reste la référence : citez-le avec son titre et son lien.',
		            'https://news.example/abonnement?from=agent', 'S''abonner au Quotidien');
		INSERT INTO card_eligibility (card_id, org_id, fragment_id) VALUES (:'card', :'org', :'fragment');
		INSERT INTO delivery_keys (id, org_id, name, key_hash, prefix)
		    VALUES (:'key_id', :'org', 'bench edge', sha256(convert_to(:'key', 'UTF8')), left(:'key', 12));
		COMMIT;
	SQL
}

# ---------------------------------------------------------------- the page and the servers

# write_page FILE: an article page as a news site serves it: a head with styles and a
# script, navigation, the article (a heading and about 30 KB of paragraphs), related links.
# shellcheck disable=SC1112 # the apostrophes are typographic ones, on purpose (UTF-8 text)
write_page() {
	local i
	{
		printf '<!DOCTYPE html>\n<html lang="fr">\n<head>\n<meta charset="utf-8">\n'
		printf '<title>Marchés de l’énergie : ce qui change cet hiver</title>\n<style>\n'
		for ((i = 1; i <= 40; i++)); do
			printf '.block-%d { margin: 0 0 %dpx; padding: 4px 8px; font: 16px/1.5 Georgia, serif; }\n' "$i" "$i"
		done
		printf '</style>\n<script>window.dataLayer = window.dataLayer || []; dataLayer.push({ section: "monde" });</script>\n'
		printf '</head>\n<body>\n<header class="site">\n<nav>\n'
		for ((i = 1; i <= 40; i++)); do
			printf '<a href="/rubrique/%d">Rubrique %d</a>\n' "$i" "$i"
		done
		printf '</nav>\n</header>\n<main>\n<article class="story">\n'
		printf '<h1>Marchés de l’énergie : ce qui change cet hiver</h1>\n'
		for ((i = 1; i <= 68; i++)); do
			printf '<p>%d. Les prix de gros de l’électricité ont reculé depuis le printemps, mais les contrats signés ' "$i"
			printf 'l’an dernier pèsent encore sur les factures des ménages et des entreprises. Les fournisseurs '
			printf 'répercutent la baisse avec plusieurs mois de retard, et les tarifs réglementés suivent une formule '
			printf 'qui lisse les variations sur deux ans. Pour les collectivités, la question est celle des '
			printf 'achats groupés : faut-il fixer les prix maintenant ou attendre l’hiver ?</p>\n'
		done
		printf '</article>\n<aside class="related">\n'
		for ((i = 1; i <= 30; i++)); do
			printf '<a href="/monde/article-%d">À lire aussi : un autre article, numéro %d</a>\n' "$i" "$i"
		done
		printf '</aside>\n</main>\n<footer>© Le Quotidien</footer>\n</body>\n</html>\n'
	} >"$1"
}

start_origin() {
	local dir=$WORKDIR/origin
	mkdir -p "$dir/www"
	chmod 755 "$dir" "$dir/www"
	write_page "$dir/www/article.html"
	chmod 644 "$dir/www/article.html"
	nginx_conf "$dir" "$CPUS" <<-EOF
		types { text/html html; }
		default_type text/html;
		charset utf-8;
		open_file_cache max=16 inactive=60s;
		open_file_cache_valid 60s;
		server {
		    listen 127.0.0.1:$PORT_ORIGIN;
		    root $dir/www;
		    location = $PAGE_PATH { try_files /article.html =404; }
		}
	EOF
	start_nginx_in PID_ORIGIN "$dir" origin "http://127.0.0.1:$PORT_ORIGIN$PAGE_PATH"
	PAGE_BYTES=$(wc -c <"$dir/www/article.html")
}

# The reference: nginx as a publisher would put it in front of an origin. Its buffers hold
# the whole page, so it never writes to a temporary file.
start_proxy() {
	local dir=$WORKDIR/proxy
	nginx_conf "$dir" "$CPUS" <<-EOF
		upstream origin {
		    server 127.0.0.1:$PORT_ORIGIN;
		    keepalive 256;
		    keepalive_requests 1000000000;
		}
		server {
		    listen 127.0.0.1:$PORT_PROXY;
		    location / {
		        proxy_pass http://origin;
		        proxy_http_version 1.1;
		        proxy_set_header Connection "";
		        proxy_set_header Host \$http_host;
		        proxy_buffer_size 16k;
		        proxy_buffers 8 16k;
		        proxy_max_temp_file_size 0;
		    }
		}
	EOF
	start_nginx_in PID_PROXY "$dir" "nginx proxy" "$PROXY_URL$PAGE_PATH"
}

start_serve() {
	local log=$WORKDIR/serve.log
	DATABASE_URL=$BENCH_URL AGENTCARD_LISTEN=127.0.0.1:$PORT_SERVE AGENTCARD_REFRESH_MS=60000 \
		AGENTCARD_WORKERS=$CPUS "$AGENTCARD_BIN" serve >"$log" 2>&1 &
	PID_SERVE=$!
	STARTED_PIDS+=("$PID_SERVE")
	wait_http "agentcard serve" "$PID_SERVE" "$SERVE_URL/ready" "$log"
}

# launch_edge VAR PORT SERVICE LOG: an agentcard edge on PORT in front of the origin, its
# cards from SERVICE, its pid in VAR. It logs at info: its "fail open" lines, one a page
# served without its card.
launch_edge() {
	local -n edge_pid=$1
	local port=$2 service=$3 log=$4 sites=$WORKDIR/sites.toml
	printf '[[site]]\ndomain = "%s"\npartner_id = "%s"\nfragment_id = "%s"\nlang = "fr"\n' \
		"$SITE" "$PARTNER_ID" "$FRAGMENT_ID" >"$sites"
	AGENTCARD_EDGE_LISTEN=127.0.0.1:$port AGENTCARD_EDGE_ORIGIN=http://127.0.0.1:$PORT_ORIGIN \
		AGENTCARD_EDGE_SERVICE=$service AGENTCARD_EDGE_SITES=$sites AGENTCARD_EDGE_KEY=$BENCH_KEY \
		AGENTCARD_EDGE_BUDGET_MS=$BUDGET_MS RUST_LOG=info "$AGENTCARD_BIN" edge >"$log" 2>&1 &
	edge_pid=$!
	STARTED_PIDS+=("$edge_pid")
	wait_http "agentcard edge" "$edge_pid" "http://127.0.0.1:$port$PAGE_PATH" "$log"
}

start_edge() {
	EDGE_LOG=$WORKDIR/edge.log
	launch_edge PID_EDGE "$PORT_EDGE" "$SERVE_URL" "$EDGE_LOG"
}

# A card service slower than the budget: every /fragment call answered with a card after
# SLOW_CARD_MS, any other path at once (to see it started).
start_slow_card() {
	local stub=$WORKDIR/slow_card.py log=$WORKDIR/slow-card.log
	cat >"$stub" <<-'PYTHON'
		import sys
		import time
		from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

		DELAY = int(sys.argv[2]) / 1000
		CARD = b'<aside class="agentcard" data-card-id="crd_slow" data-brand="Slow" lang="fr">late</aside>'


		class Card(BaseHTTPRequestHandler):
		    protocol_version = "HTTP/1.1"

		    def do_GET(self):
		        if self.path.startswith("/fragment"):
		            time.sleep(DELAY)
		        self.send_response(200)
		        self.send_header("Content-Type", "text/html; charset=utf-8")
		        self.send_header("Content-Length", str(len(CARD)))
		        self.end_headers()
		        self.wfile.write(CARD)

		    def log_message(self, *args):
		        pass


		class Server(ThreadingHTTPServer):
		    daemon_threads = True
		    request_queue_size = 1024

		    def handle_error(self, request, client_address):
		        pass  # the edge hung up at its budget, before the card


		Server(("127.0.0.1", int(sys.argv[1])), Card).serve_forever()
	PYTHON
	python3 "$stub" "$PORT_SLOW_CARD" "$SLOW_CARD_MS" >"$log" 2>&1 &
	PID_SLOW_CARD=$!
	STARTED_PIDS+=("$PID_SLOW_CARD")
	wait_http "slow card stub" "$PID_SLOW_CARD" "$SLOW_CARD_URL/ready" "$log"
}

start_slow_edge() {
	SLOW_EDGE_LOG=$WORKDIR/slow-edge.log
	launch_edge PID_SLOW_EDGE "$PORT_SLOW_EDGE" "$SLOW_CARD_URL" "$SLOW_EDGE_LOG"
}

start_servers() {
	section "Servers (loopback, $CPUS threads or workers each, not pinned)"
	pick_ports
	start_origin
	start_serve
	start_edge
	start_proxy
	start_slow_card
	start_slow_edge
	echo "origin      nginx, static page       127.0.0.1:$PORT_ORIGIN  ($PAGE_BYTES bytes, $PAGE_PATH)"
	echo "edge        agentcard edge           127.0.0.1:$PORT_EDGE  (budget $BUDGET_MS ms)"
	echo "nginx proxy nginx, proxy_pass        127.0.0.1:$PORT_PROXY"
	echo "serve       agentcard serve          127.0.0.1:$PORT_SERVE"
	echo "slow card   Python stub              127.0.0.1:$PORT_SLOW_CARD  (a card $SLOW_CARD_MS ms after each call)"
	echo "slow edge   agentcard edge           127.0.0.1:$PORT_SLOW_EDGE  (budget $BUDGET_MS ms, cards from the slow card)"
	check_pages
}

# ---------------------------------------------------------------- checks

# fetch NAME OUTPUT CURL-ARGS...: one request; its status and size shown, the body in OUTPUT.
fetch() {
	local name=$1 output=$2 answer
	shift 2
	answer=$(curl -sS -o "$output" --max-time "${FETCH_SECONDS:-5}" -w '%{http_code} %{size_download}' "$@") ||
		die "$name: no answer"
	printf '%-34s HTTP %s, %s bytes\n' "$name" "${answer% *}" "${answer#* }"
	[[ ${answer% *} == 200 ]] || die "$name: HTTP ${answer% *}"
}

check_pages() {
	local dir=$WORKDIR/check
	mkdir -p "$dir"
	fetch "origin, human" "$dir/origin" -A "$HUMAN_UA" -H "Host: $SITE" "http://127.0.0.1:$PORT_ORIGIN$PAGE_PATH"
	fetch "E edge, human" "$dir/edge" -A "$HUMAN_UA" -H "Host: $SITE" "$EDGE_URL$PAGE_PATH"
	cmp -s "$dir/origin" "$dir/edge" || die "the edge changed a human's page"
	fetch "N nginx proxy, human" "$dir/proxy" -A "$HUMAN_UA" -H "Host: $SITE" "$PROXY_URL$PAGE_PATH"
	cmp -s "$dir/origin" "$dir/proxy" || die "the nginx proxy changed the page"
	fetch "K card call alone" "$dir/card" -A "$EDGE_UA" -H "X-Agent-UA: $AGENT_UA" \
		-H "X-API-Key: $BENCH_KEY" -H "Accept: text/html" "$CARD_URL"
	grep -q 'data-brand=' "$dir/card" || die "serve's /fragment answered no card: $(head -c 300 "$dir/card")"
	fetch "G edge, agent" "$dir/agent" -A "$AGENT_UA" -H "Host: $SITE" "$EDGE_URL$PAGE_PATH"
	grep -qF '</aside><article class="story"><p class="agentcard-brand-line">' "$dir/agent" ||
		die "the agent's page holds no card before <article> (edge log: $(tail -n 3 "$EDGE_LOG"))"
	# However late the page: the check reports it, the phase measures it.
	FETCH_SECONDS=30 fetch "S slow edge, agent" "$dir/slow" -A "$AGENT_UA" -H "Host: $SITE" "$SLOW_EDGE_URL$PAGE_PATH"
	cmp -s "$dir/origin" "$dir/slow" || die "the slow edge's agent page is not the origin's"
	grep -q 'fail open: timeout' "$SLOW_EDGE_LOG" ||
		die "the slow edge logged no timeout (its log: $(tail -n 3 "$SLOW_EDGE_LOG"))"
	echo "the humans' pages through both proxies are the origin's; the agent's has the card and its brand line;"
	echo "the agent's through the slow edge is the origin's, its card given up at the budget"
}

# ---------------------------------------------------------------- measuring

target_name() {
	case $1 in
	E) echo "E edge, human" ;;
	N) echo "N nginx proxy, human" ;;
	K) echo "K card call alone (serve)" ;;
	G) echo "G edge, agent (card composed)" ;;
	H) echo "H edge, human" ;;
	S) echo "S slow edge, agent (card late)" ;;
	esac
}

# Processes whose CPU time counts for a target: the proxy's (nginx: master and workers), or
# serve's for the card call.
target_pids() {
	case $1 in
	E | G | H) echo "$PID_EDGE" ;;
	N) echo "$PID_PROXY $(pgrep -P "$PID_PROXY" | tr '\n' ' ')" ;;
	K) echo "$PID_SERVE" ;;
	S) echo "$PID_SLOW_EDGE" ;;
	esac
}

# The log of the edge a target goes through.
target_log() {
	case $1 in
	S) echo "$SLOW_EDGE_LOG" ;;
	*) echo "$EDGE_LOG" ;;
	esac
}

target_connections() {
	case $1 in
	E | N) echo "$CONNECTIONS" ;;
	*) echo "$LATENCY_CONNECTIONS" ;;
	esac
}

# wrk_target TARGET SECONDS OUTPUT: one wrk run against TARGET, output kept in OUTPUT.
wrk_target() {
	local target=$1 seconds=$2 output=$3
	local timeout=2s
	[[ $target == S ]] && timeout=$SLOW_WRK_TIMEOUT
	local -a args=(-t "$THREADS" -c "$(target_connections "$target")" -d "${seconds}s" --latency --timeout "$timeout")
	case $target in
	E | H) args+=(-H "Host: $SITE" -H "User-Agent: $HUMAN_UA" "$EDGE_URL$PAGE_PATH") ;;
	N) args+=(-H "Host: $SITE" -H "User-Agent: $HUMAN_UA" "$PROXY_URL$PAGE_PATH") ;;
	G) args+=(-H "Host: $SITE" -H "User-Agent: $AGENT_UA" "$EDGE_URL$PAGE_PATH") ;;
	K) args+=(-H "User-Agent: $EDGE_UA" -H "X-Agent-UA: $AGENT_UA" -H "X-API-Key: $BENCH_KEY"
		-H "Accept: text/html" "$CARD_URL") ;;
	S) args+=(-H "Host: $SITE" -H "User-Agent: $AGENT_UA" "$SLOW_EDGE_URL$PAGE_PATH") ;;
	esac
	wrk_session "$seconds" "$output" "$(target_name "$target")" "${args[@]}"
}

# fail_open_lines LOG: the "fail open" lines an edge has logged so far.
fail_open_lines() {
	grep -c 'fail open:' "$1" || true
}

# One line per run, tab-separated: 1 target, 2 round, 3 req/s, 4 p50 µs, 5 p99 µs, 6 CPU
# µs/req of the target's processes, 7 non-2xx, 8 socket errors, 9 bytes/resp, 10 requests wrk
# made, 11 the edge's "fail open" lines during the run (- for N and K), 12 max µs.
RESULTS=$WORKDIR/results.tsv

# measure TARGET ROUND: one measured run; appends a line to RESULTS and prints it.
measure() {
	local target=$1 round=$2 output=$WORKDIR/wrk-$1-$2.txt before after opened
	local requests rps p50 p99 non2xx errors bytes_read cpu size fail_open=- max log
	local -a pids
	read -r -a pids <<<"$(target_pids "$target")"
	log=$(target_log "$target")
	before=$(cpu_ticks "${pids[@]}")
	opened=$(fail_open_lines "$log")
	wrk_target "$target" "$DURATION" "$output"
	# wrk leaves the pages in flight when its time is up; the slow edge still serves them,
	# each at the budget: their lines belong to this run.
	[[ $target == S ]] && sleep "$(awk -v ms="$BUDGET_MS" 'BEGIN { print ms / 1000 + 0.5 }')"
	after=$(cpu_ticks "${pids[@]}")
	read -r requests rps p50 p99 non2xx errors bytes_read <<<"$(parse_wrk "$output")"
	((requests > 0)) || die "no request completed against $(target_name "$target") (see $output)"
	cpu=$(per_request_us $((after - before)) "$requests")
	size=$(awk -v b="$bytes_read" -v n="$requests" 'BEGIN { printf "%.0f", b / n }')
	max=$(wrk_max_us "$output")
	[[ $target == [EGHS] ]] && fail_open=$(($(fail_open_lines "$log") - opened))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$round" "$rps" "$p50" "$p99" "$cpu" \
		"$non2xx" "$errors" "$size" "$requests" "$fail_open" "$max" >>"$RESULTS"
	printf 'round %d/%d  %-30s %8.0f req/s  p50 %7.3f ms  p99 %7.3f ms  max %8.3f ms  CPU %7.2f µs/req  %6d B/resp  non-2xx %d  socket errors %d  fail open %s\n' \
		"$round" "$ROUNDS" "$(target_name "$target")" "$rps" "$(ms "$p50")" "$(ms "$p99")" "$(ms "$max")" "$cpu" "$size" \
		"$non2xx" "$errors" "$fail_open"
}

warm_up() {
	local target
	section "Warm-up (${WARMUP} s per target, not measured)"
	for target in "${HUMAN_TARGETS[@]}" "${AGENT_TARGETS[@]}" "${SLOW_TARGETS[@]}"; do
		wrk_target "$target" "$WARMUP" "$WORKDIR/warmup-$target.txt"
		echo "$(target_name "$target"): done"
	done
}

# run_rounds TARGET...: ROUNDS rounds, each a run of every target in turn.
run_rounds() {
	local round target
	for ((round = 1; round <= ROUNDS; round++)); do
		for target in "$@"; do
			measure "$target" "$round"
		done
	done
}

# ---------------------------------------------------------------- results

print_rows() {
	local target
	printf '%-30s %10s %9s %9s %12s %11s %8s %10s\n' target "req/s" "p50 ms" "p99 ms" "CPU µs/req" "bytes/resp" non-2xx "fail open"
	for target in "$@"; do
		printf '%-30s %10.0f %9.3f %9.3f %12.2f %11.0f %8.0f %10s\n' "$(target_name "$target")" \
			"$(median "$target" 3)" "$(ms "$(median "$target" 4)")" "$(ms "$(median "$target" 5)")" \
			"$(median "$target" 6)" "$(median "$target" 9)" "$(median "$target" 7)" "$(total "$target" 11)"
	done
}

# total TARGET COLUMN: the sum of a column over the target's rounds (- when not counted).
total() {
	awk -F '\t' -v t="$1" -v c="$2" '$1 == t && $c != "-" { n += $c; seen = 1 } END { print seen ? n : "-" }' "$RESULTS"
}

# maximum TARGET COLUMN: the largest value of a column over the target's rounds.
maximum() {
	awk -F '\t' -v t="$1" -v c="$2" '$1 == t && ($c > m || !seen) { m = $c; seen = 1 } END { print m + 0 }' "$RESULTS"
}

# holds A OP B: "yes" when A OP B (OP: <= or <), else "no"; of the unrounded figures.
holds() {
	awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN { print ((op == "<=" ? a <= b : a < b) ? "yes" : "no") }'
}

# ratio3 A B: A / B with three decimals.
ratio3() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3f", a / b }'
}

# The humans' figures: HUMAN_RPS, HUMAN_P99, HUMAN_CPU (edge / nginx) and whether the first
# two meet their targets, RPS_MET and P99_MET.
report_humans() {
	section "Humans: median over $ROUNDS rounds, $CONNECTIONS connections, browser User-Agent"
	print_rows "${HUMAN_TARGETS[@]}"
	HUMAN_RPS=$(ratio3 "$(median E 3)" "$(median N 3)")
	HUMAN_P99=$(ratio3 "$(median E 5)" "$(median N 5)")
	HUMAN_CPU=$(ratio3 "$(median E 6)" "$(median N 6)")
	RPS_MET=$(holds "$(median N 3)" "<=" "$(median E 3)")
	P99_MET=$(holds "$(median E 5)" "<=" "$(awk -v n="$(median N 5)" 'BEGIN { print 1.2 * n }')")
	echo
	echo "edge / nginx: req/s $HUMAN_RPS (target ≥ 1.0: $RPS_MET)   p99 $HUMAN_P99 (target ≤ 1.2: $P99_MET)" \
		"  CPU per request $HUMAN_CPU"
	echo "paired within rounds (median of each round's own ratio): req/s $(paired_ratio E N 3), p99 $(paired_ratio E N 5)"
	echo "CPU time: the proxy's process(es) only (nginx: master and workers), not the origin's nor wrk's."
}

# added_per_round: each round's G − max(K, H) at p50, in µs, one a line.
added_per_round() {
	awk -F '\t' '$1 == "K" { k[$2] = $4 } $1 == "G" { g[$2] = $4 } $1 == "H" { h[$2] = $4 }
		END { for (r in g) if ((r in k) && (r in h)) printf "%.1f\n", g[r] - (k[r] > h[r] ? k[r] : h[r]) }' "$RESULTS"
}

# The agents' figures: ADDED (µs) and what it is made of.
report_agents() {
	local card human agent rounds
	section "Agents: median over $ROUNDS rounds, $LATENCY_CONNECTIONS connections (latency, not queueing)"
	print_rows "${AGENT_TARGETS[@]}"
	card=$(median K 4) agent=$(median G 4) human=$(median H 4)
	ADDED=$(awk -v g="$agent" -v k="$card" -v h="$human" 'BEGIN { printf "%.1f", g - (k > h ? k : h) }')
	ADDED_FORMULA="$(ms "$agent") − max($(ms "$card"), $(ms "$human"))"
	rounds=$(added_per_round | sort -g | awk '{ printf "%s%.3f", sep, $1 / 1000; sep = ", " }')
	echo
	echo "added latency at p50 = G − max(K, H) = $ADDED_FORMULA = $(ms "$ADDED") ms" \
		"(target: under 1 ms: $(holds "$ADDED" "<" 1000))"
	echo "each round's own difference: $rounds ms; their median $(ms "$(added_per_round | median_of 0)") ms"
	if [[ $(total G 11) != 0 ]]; then
		echo "warning: the edge served $(total G 11) agent pages without their card (fail open, see the edge's log): G is not all composition"
	fi
}

# The slow card's figures: SLOW_P99 and SLOW_MAX (µs), SLOW_MET against budget + 100 ms.
report_slow() {
	local limit=$(((BUDGET_MS + 100) * 1000)) errors pages fail_open
	section "Slow card: median over $ROUNDS rounds, $LATENCY_CONNECTIONS connections, a card $SLOW_CARD_MS ms late, budget $BUDGET_MS ms"
	print_rows "${SLOW_TARGETS[@]}"
	SLOW_P99=$(median S 5) SLOW_MAX=$(maximum S 12)
	errors=$(total S 8) pages=$(total S 10) fail_open=$(total S 11)
	SLOW_MET=$(holds "$SLOW_MAX" "<=" "$limit")
	((errors == 0)) || SLOW_MET=no
	echo
	echo "agent page time, card late: p99 $(ms "$SLOW_P99") ms (median over rounds), max $(ms "$SLOW_MAX") ms (over every run)" \
		"against the budget, $BUDGET_MS ms (target: max ≤ $((BUDGET_MS + 100)) ms: $SLOW_MET)"
	echo "fail open lines of the slow edge: $fail_open, for $pages pages wrk saw whole (the edge also serves" \
		"the up to $LATENCY_CONNECTIONS pages in flight when each run ends)"
	if ((errors > 0)); then
		echo "warning: $errors requests to the slow edge failed or took over $SLOW_WRK_TIMEOUT (wrk's socket errors): the maximum is at least that"
	fi
}

commit() {
	local hash
	hash=$(git rev-parse --short HEAD 2>/dev/null) || { echo unknown; return 0; }
	[[ -z $(git status --porcelain --untracked-files=no 2>/dev/null) ]] || hash+=" with uncommitted changes"
	echo "$hash"
}

final_table() {
	local e_rps n_rps e_p99 n_p99
	e_rps=$(median E 3) n_rps=$(median N 3) e_p99=$(ms "$(median E 5)") n_p99=$(ms "$(median N 5)")
	section "Table (Markdown)"
	echo "| measure | median | target | met? |"
	echo "|---|---|---|---|"
	printf '| humans: edge req/s / nginx proxy req/s (%.0f / %.0f) | %s | ≥ 1.0 | %s |\n' \
		"$e_rps" "$n_rps" "$HUMAN_RPS" "$RPS_MET"
	printf '| humans: edge p99 / nginx proxy p99 (%s ms / %s ms) | %s | ≤ 1.2 | %s |\n' \
		"$e_p99" "$n_p99" "$HUMAN_P99" "$P99_MET"
	printf '| humans: edge CPU per request / nginx proxy'"'"'s (%.2f µs / %.2f µs) | %s | — | — |\n' \
		"$(median E 6)" "$(median N 6)" "$HUMAN_CPU"
	printf '| agents: added latency at p50, G − max(K, H) (%s ms) | %s ms | < 1 ms | %s |\n' \
		"$ADDED_FORMULA" "$(ms "$ADDED")" "$(holds "$ADDED" "<" 1000)"
	printf '| agents, card %s ms late (budget %s ms): page time p99 / max | %s ms / %s ms | max ≤ %s ms | %s |\n' \
		"$SLOW_CARD_MS" "$BUDGET_MS" "$(ms "$SLOW_P99")" "$(ms "$SLOW_MAX")" "$((BUDGET_MS + 100))" "$SLOW_MET"
	echo
	echo "$ROUNDS rounds of $DURATION s, alternating; wrk $THREADS threads, keep-alive, $CONNECTIONS connections" \
		"(humans) and $LATENCY_CONNECTIONS (agents: K the card call alone, G an agent's page through the edge," \
		"H a human's page through the edge; S an agent's page through an edge whose cards come $SLOW_CARD_MS ms late);" \
		"a $PAGE_BYTES-byte page from nginx."
	machine
	echo "commit: $(commit)"
}

# ---------------------------------------------------------------- main

main() {
	local start=$SECONDS
	machine
	ensure_bench_tools
	prepare
	start_servers
	warm_up
	section "Humans: $ROUNDS rounds of E N, wrk $THREADS threads, $CONNECTIONS connections, keep-alive, ${DURATION} s each"
	run_rounds "${HUMAN_TARGETS[@]}"
	section "Agents: $ROUNDS rounds of K G H, wrk $THREADS threads, $LATENCY_CONNECTIONS connections, keep-alive, ${DURATION} s each"
	run_rounds "${AGENT_TARGETS[@]}"
	section "Slow card: $ROUNDS runs of S, wrk $THREADS threads, $LATENCY_CONNECTIONS connections, keep-alive, ${DURATION} s each"
	run_rounds "${SLOW_TARGETS[@]}"
	report_humans
	report_agents
	report_slow
	final_table
	echo
	echo "total time: $((SECONDS - start)) s"
}

main
