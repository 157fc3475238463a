#!/usr/bin/env bash
# scripts/scan-console.sh: the console scanned by Wapiti, a web vulnerability scanner, signed in
# as an owner on demo data. Exits 0 when Wapiti reports nothing; non-zero on any vulnerability
# or anomaly (an answer of 500 is one), after printing them and the report's path.
#
# It takes minutes, so scripts/test.sh does not run it. Everything stays on this machine: a
# fresh database `agentcard_scan` (dropped and made again) on the server scripts/lib/postgres.sh
# finds, `agentcard serve` (the dev build) on a free 127.0.0.1 port, the console on `localhost`
# (Python's resolver, unlike browsers, does not send console.localhost to loopback), and Wapiti
# scoped to that origin alone, its out-of-band endpoints pointed at a closed loopback port so
# that it calls no outside host.
#
# Wapiti, pinned, goes into a Python environment of its own, .venv-scan/ (made by
# scripts/lib/venv.sh as .venv/ is): it pins dozens of packages (httpx, h11, mitmproxy…) to
# versions that clash with those of the test tools in .venv/. It is said before it installs.
#
# The scan runs as the owner with their session's cookie, and sends the console's own Origin
# with every request, so that its forms' POSTs reach the pages' handlers instead of stopping at
# the origin check; /sign-out is left out, so the session lasts. Wapiti's report (JSON) and the
# server's log go to target/scan-console/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
WAPITI=wapiti3==3.2.3
MODULES=xss,permanentxss,sql,csrf,redirect,crlf,http_headers,cookieflags,exec,file,csp
# The scan's own limit, so a run ends even when the crawl keeps finding forms.
MAX_SCAN_SECONDS=${AGENTCARD_SCAN_SECONDS:-1800}
out=$root/target/scan-console
mkdir -p "$out"

export AGENTCARD_VENV=$root/.venv-scan
# shellcheck source=scripts/lib/venv.sh
source scripts/lib/venv.sh
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh

echo "==> Wapiti ($WAPITI) in its own Python environment $AGENTCARD_VENV" >&2
agentcard_venv "$WAPITI"

# The scan's own database, never one DATABASE_URL names.
unset DATABASE_URL
agentcard_find_postgres
_agentcard_psql "$AGENTCARD_PG_URL" -v dbname=agentcard_scan \
	<<<'DROP DATABASE IF EXISTS :"dbname" WITH (FORCE)'
agentcard_ensure_database agentcard_scan
DATABASE_URL=$(agentcard_database_url agentcard_scan)
export DATABASE_URL

echo "==> cargo build" >&2
cargo build
bin=$root/target/debug/agentcard

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
host=localhost
origin=http://$host:$port
export AGENTCARD_ICON_FETCH=off AGENTCARD_CONSOLE_HOST=$host AGENTCARD_CONSOLE_URL=$origin
export AGENTCARD_LISTEN=127.0.0.1:$port
"$bin" migrate >&2
link=$("$bin" admin demo --format json | python3 -c \
	'import json, sys; print(json.load(sys.stdin)["console"]["set_password_link"])')

"$bin" serve >"$out/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	curl -fs -o /dev/null "http://127.0.0.1:$port/health" && break
	sleep 0.2
done

# The owner sets a password through the demo's link, which signs them in: the cookie is the
# session's.
password=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
cookie=$(curl -fs -o /dev/null -D - --resolve "$host:$port:127.0.0.1" \
	-H "Origin: $origin" --data-urlencode "new_password=$password" "$link" |
	sed -n 's/^[Ss]et-[Cc]ookie: \(agentcard_session=[0-9a-f]*\).*/\1/p')
if [[ -z $cookie ]]; then
	echo "agentcard: error: the demo owner's link gave no session (see $out/server.log)" >&2
	exit 1
fi

echo "==> wapiti on $origin/ (modules $MODULES, at most ${MAX_SCAN_SECONDS}s)" >&2
rm -f "$out/report.json"
wapiti -u "$origin/" --scope folder -m "$MODULES" \
	-H "Cookie: $cookie" -H "Origin: $origin" -x "$origin/sign-out" \
	--endpoint http://127.0.0.1:9/ --dns-endpoint localhost \
	--flush-session --store-session "$out/session" --store-config "$out/config" \
	--max-scan-time "$MAX_SCAN_SECONDS" --color -f json -o "$out/report.json" >&2

commit=$(git rev-parse --short HEAD)
python3 - "$out/report.json" "$commit" <<'PY'
import json
import sys

path, commit = sys.argv[1], sys.argv[2]
report = json.load(open(path))
infos = report.get("infos", {})
found = []
for kind in ("vulnerabilities", "anomalies"):
    for category, items in report.get(kind, {}).items():
        for item in items:
            found.append(f"{kind[:-3] if kind.endswith('ies') else kind}: {category}: "
                         f"{item.get('method', '')} {item.get('path', '')} "
                         f"{item.get('info', '')}".strip())
print(f"wapiti {infos.get('version', '?')} on commit {commit}, {infos.get('date', '?')}: "
      f"{infos.get('crawled_pages_nbr', '?')} URLs and forms tried")
for line in found:
    print(f"  {line}")
print(f"{len(found)} finding(s); report: {path}")
if not infos.get("crawled_pages_nbr"):
    print("nothing was scanned: Wapiti reached no page")
    sys.exit(1)
sys.exit(1 if found else 0)
PY
