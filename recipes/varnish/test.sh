#!/usr/bin/env bash
# recipes/varnish/test.sh [HARNESS CHECK ARGS...]: runs every shared edge case
# (recipes/cases/) that applies to Varnish through agentcard.vcl loaded into the
# real varnishd, under varnishtest. Exit 0 when every case passed.
#
# Installs the Debian package `varnish` when varnishtest is absent. Starts the
# harness's origin and card stubs on free loopback ports, writes a copy of
# agentcard.vcl pointing at them (the budget and a test key file put in), runs
# recipes/varnish/agentcard.vtc (the harness's check, then check-log.py on the
# VCL's log lines), prints what they said, and stops what it started. Extra arguments go to `harness.py check` (e.g. `--case NAME`).
# AGENTCARD_EDGE_BUDGET_MS sets the budget (default 800); KEEP_TMP=1 keeps the
# temporary directory (the VCL as loaded, varnishtest.log, the report).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
budget_ms=${AGENTCARD_EDGE_BUDGET_MS:-800}
key=svc_live_edgetestkey0123456789

if ! command -v varnishtest >/dev/null 2>&1 || ! command -v varnishd >/dev/null 2>&1; then
	# shellcheck source=scripts/lib/apt.sh
	source scripts/lib/apt.sh
	agentcard_apt_install varnish
fi

# The gate's regex in agentcard.vcl spells the 17 markers of the data file,
# in its order, each letter as [Xx] (ASCII case only, as the classifier).
python3 - recipes/varnish/agentcard.vcl data/agent-markers-v0.1.txt <<'PY'
import re, sys
vcl, data = (open(p, encoding="utf-8").read() for p in sys.argv[1:])
markers = [line.split()[1] for line in data.splitlines()
           if line.strip() and not line.startswith("#") and not line.startswith("version:")]
found = re.findall(r'User-Agent ~ "\(\?<!\[A-Za-z0-9_\]\)\((.*?)\)\(\?!\[A-Za-z0-9_\]\)"', vcl)
if len(found) != 1:
    sys.exit(f"recipes/varnish: agentcard.vcl has {len(found)} gate regexes, not 1")
spelled = []
for alt in found[0].split("|"):
    word = ""
    for m in re.finditer(r"\[([A-Za-z])([A-Za-z])\]|([0-9-])", alt):
        if m.group(3):
            word += m.group(3)
        elif m.group(1).isupper() and m.group(2) == m.group(1).lower():
            word += m.group(1)
        else:
            sys.exit(f"recipes/varnish: gate regex: bad class [{m.group(1)}{m.group(2)}]")
    if re.sub(r"\[[A-Za-z]{2}\]|[0-9-]", "", alt):
        sys.exit(f"recipes/varnish: gate regex: unexpected text in {alt!r}")
    spelled.append(word)
if [w.lower() for w in spelled] != [m.lower() for m in markers]:
    sys.exit(f"recipes/varnish: the gate regex spells {spelled}, the data file lists {markers}")
PY

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentcard-varnish.XXXXXX")
stubs_pid=
cleanup() {
	if [[ -n $stubs_pid ]]; then
		kill "$stubs_pid" 2>/dev/null || true
		wait "$stubs_pid" 2>/dev/null || true
	fi
	if [[ -n ${KEEP_TMP:-} ]]; then echo "recipes/varnish: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two free loopback ports (asked of the kernel, then released for the stubs).
read -r origin_port card_port < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
PY
)

python3 recipes/cases/harness.py stubs --origin-port "$origin_port" --card-port "$card_port" \
	--markup esi --budget-ms "$budget_ms" >"$tmp/stubs.out" 2>"$tmp/stubs.err" &
stubs_pid=$!
for _ in $(seq 100); do
	grep -qx ready "$tmp/stubs.out" 2>/dev/null && break
	if ! kill -0 "$stubs_pid" 2>/dev/null; then
		echo "recipes/varnish: the harness's stubs did not start:" >&2
		cat "$tmp/stubs.err" >&2
		exit 1
	fi
	sleep 0.1
done
if ! grep -qx ready "$tmp/stubs.out"; then
	echo "recipes/varnish: the harness's stubs are not ready after 10 s" >&2
	exit 1
fi

# The recipe as a publisher edits it: origin and service addresses, the budget
# and the key file. varnishd's child runs as another user (vcache) when
# started as root: it must be able to read the key.
chmod 0755 "$tmp"
printf '%s\n' "$key" >"$tmp/agentcard.key"
chmod 0644 "$tmp/agentcard.key"
python3 - "$root/recipes/varnish/agentcard.vcl" "$tmp/agentcard.vcl" \
	"$origin_port" "$card_port" "$budget_ms" "$tmp/agentcard.key" <<'PY'
import re, sys
src, dst, origin_port, card_port, budget_ms, key_file = sys.argv[1:]
vcl = open(src, encoding="utf-8").read()

def sub(pattern, repl, count=1):
    global vcl
    vcl, n = re.subn(pattern, repl, vcl, flags=re.M | re.S)
    if n != count:
        sys.exit(f"recipes/varnish: {pattern!r} matched {n} times in agentcard.vcl, not {count}")

sub(r'(^backend default \{.*?\.host = )"[^"]*";(.*?\.port = )"[^"]*";',
    rf'\1"127.0.0.1";\2"{origin_port}";')
sub(r'(^backend agentcard \{.*?\.host = )"[^"]*";(.*?\.port = )"[^"]*";',
    rf'\1"127.0.0.1";\2"{card_port}";')
sub(r'(set bereq\.(?:connect|first_byte|between_bytes)_timeout = )[0-9.]+m?s;',
    rf'\g<1>{budget_ms}ms;', count=3)
sub(r'"/etc/varnish/agentcard\.key"', f'"{key_file}"')
# The test site's values (recipes/cases/cases.json's `site`) in the {{…}} placeholders.
for name, value in [("domain", "news.example"), ("partner_id", "org_edge"),
                    ("fragment_id", "frg_edge"), ("lang", "fr"), ("service_host", "127.0.0.1")]:
    sub(re.escape("{{" + name + "}}"), value)
open(dst, "w", encoding="utf-8").write(vcl)
PY

status=0
varnishtest -b 64M -t 300 \
	-Dvcl="$tmp/agentcard.vcl" -Droot="$root" \
	-Dorigin="http://127.0.0.1:$origin_port" -Dcard="http://127.0.0.1:$card_port" \
	-Dout="$tmp/check.out" -Dreport="$tmp/report.jsonl" -Dargs="$*" \
	recipes/varnish/agentcard.vtc >"$tmp/varnishtest.log" 2>&1 || status=$?
[[ -f $tmp/check.out ]] && cat "$tmp/check.out"
if ((status != 0)); then
	echo "recipes/varnish: varnishtest failed (status $status); from its log:" >&2
	{ grep -E '^---- |Panic|VCL_Error|Assert error' "$tmp/varnishtest.log" || true; } | tail -n 40 >&2
	tail -n 3 "$tmp/varnishtest.log" >&2
	exit 1
fi
echo "recipes/varnish: every applicable case passed"
