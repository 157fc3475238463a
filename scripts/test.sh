#!/usr/bin/env bash
# scripts/test.sh [CARGO TEST ARGS...]: every check and test, each run whatever the earlier ones
# gave: the module graph (scripts/check-deps.py: no cycle between src/'s top-level modules, db/
# above nothing, SQL only in db/, may's io only in http/), rustfmt, clippy (warnings are
# errors; every feature), cargo test (every target, then the doctests; with the feature
# external-tools: the tests that need the tools installed below), then the edge recipes'
# tests, each against the shared cases of recipes/cases/ in its real runtime, and recipes/front/test.sh, nginx in
# front of a release build of `agentcard edge` (recipes/front-haproxy/test.sh: HAProxy), and scripts/diff-edge.sh (the corpus of
# recipes/diff/ replayed and a minute of differential fuzzing against nginx and HAProxy).
# Exit 0 when all passed; the last line counts what ran: `total: N passed, M failed` over the
# three checks, cargo's tests and the recipes' cases (a step that failed without counting a
# failure counts one). Extra arguments go to `cargo test` (e.g. `scripts/test.sh fragment`),
# and then the recipes are not run.
#
# What it may install, each said before it is: with apt-get (scripts/lib/apt.sh), PostgreSQL
# when no server is found and its server programs (the outage tests start clusters of their
# own), python3-venv, and for the recipes nginx, haproxy, varnish, nodejs, npm and curl; from PyPI, into
# the project's .venv/ (scripts/lib/venv.sh), the Python packages tests run: schemathesis,
# jsonschema, prometheus_client, openapi-python-client and selenium; from npm, into
# recipes/cloudflare/node_modules/, the packages of recipes/cloudflare/package-lock.json (workerd), and
# into tests/browser/node_modules/, axe-core; for the console's browser journeys
# (tests/it/browser.rs), Debian's chromium and chromium-driver (scripts/lib/browser.sh).
#
# Tests get AGENTCARD_TEST_PG_URL, a PostgreSQL server where they may create databases (see
# scripts/lib/postgres.sh for how it is found): the harness creates fresh databases and drops
# them when it exits.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/venv.sh
source scripts/lib/venv.sh
# shellcheck source=scripts/lib/browser.sh
source scripts/lib/browser.sh

agentcard_find_postgres
export AGENTCARD_TEST_PG_URL="$AGENTCARD_PG_URL"
# No test makes the service look for a site's icon on the network: test domains never resolve.
# The icon's own tests turn it on for a server of theirs, fetching from a loopback server.
export AGENTCARD_ICON_FETCH=off
agentcard_pg_server_bindir >/dev/null

# In CI, don't leave behind a private cluster this run started.
if [[ -n ${CI:-} ]]; then
	trap 'agentcard_stop_private_postgres >/dev/null 2>&1 || true' EXIT
fi

# The Python packages of the tests, at the versions the tests were written against:
# tests/it/schema.rs (schemathesis, and jsonschema for its table of values), tests/it/metrics.rs
# (prometheus_client's parsers), tests/it/client.rs (the client generator),
# tests/it/console_safety.rs (aiosmtpd, the SMTP sink that receives the console's mail).
agentcard_venv schemathesis==4.32.5 jsonschema==4.26.0 prometheus_client==0.26.0 \
	openapi-python-client==0.29.1 aiosmtpd==1.4.6
# The console's browser journeys: Chromium, its driver, selenium and axe-core. A failure to
# install is not fatal here: the test that needs them fails and says what is missing.
agentcard_browser || true

# The edge's runtimes: tests/it/connect.rs runs the recipes downloaded from the console in nginx
# and workerd, so they are installed before cargo test, not only for the recipes' own tests.
# A failure to install is not fatal here either: the tests that need them say what is missing.
if ! [[ -x /usr/sbin/nginx || -x /sbin/nginx || -x /usr/bin/nginx ]]; then
	agentcard_apt_install nginx || true
fi
if [[ ! -d recipes/cloudflare/node_modules ]]; then
	command -v npm >/dev/null 2>&1 || agentcard_apt_install nodejs npm || true
	echo "agentcard: installing the npm packages of recipes/cloudflare/package-lock.json" \
		"(workerd, the Workers runtime) into recipes/cloudflare/node_modules/ (npm ci)" >&2
	(cd recipes/cloudflare && npm ci --no-audit --no-fund >&2) || true
fi

locked=()
[[ -f Cargo.lock ]] && locked=(--locked)
run_recipes=$((!$#))

step() {
	printf '\n==> %s\n' "$*" >&2
}

passed=0
failed=0
status=0
# counted PASSED FAILED RC: adds a step's counts; a step that failed (RC not 0) without
# counting a failure (it stopped before its cases, or cargo could not build) counts one.
counted() {
	local step_failed=$2
	if (($3 != 0)); then
		status=1
		((step_failed > 0)) || step_failed=1
	fi
	passed=$((passed + $1))
	failed=$((failed + step_failed))
}

# check NAME COMMAND...: one check, one count.
check() {
	local rc=0
	step "$1"
	shift
	"$@" || rc=$?
	counted $((rc == 0)) 0 "$rc"
}

# The counts of a cargo test log: the `test result:` line of each test binary.
# shellcheck disable=SC2317 # called by counted_run
cargo_counts() {
	awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i - 1); if ($i ~ /^failed;?$/) f += $(i - 1) } }
	     END { print p + 0, f + 0 }' "$1"
}

# The counts of a recipe test's output: a line per case or check (`ok NAME`, `FAIL NAME…`, as
# recipes/cases/harness.py and the recipe tests print them); node's summary (`ℹ pass N`,
# `ℹ fail N`) for the Workers recipe; the log checks' `log check: X of Y` (varnish: Y - X
# failed) and `log: X of Y` (nginx, whose failures are FAIL lines already).
# shellcheck disable=SC2317 # called by counted_run
recipe_counts() {
	awk '/^ok / { p++ } /^FAIL / { f++ }
	     /^ℹ pass [0-9]+$/ { p += $3 } /^ℹ fail [0-9]+$/ { f += $3 }
	     /^log check: [0-9]+ of [0-9]+ / { p += $3; f += $5 - $3 }
	     /^log: [0-9]+ of [0-9]+ / { p += $2 }
	     END { print p + 0, f + 0 }' "$1"
}

# The differential harness's step: the corpus replayed, then a minute of generated streams.
# shellcheck disable=SC2317 # called by counted_run
diff_edge() {
	local rc=0
	bash scripts/diff-edge.sh --replay || rc=1
	bash scripts/diff-edge.sh --minutes 1 || rc=1
	return "$rc"
}

# counted_run COUNTER COMMAND...: runs COMMAND, its output shown, and adds the counts that
# COUNTER (cargo_counts or recipe_counts) reads in it.
counted_run() {
	local counter=$1 log rc=0 counts
	shift
	log=$(mktemp)
	"$@" 2>&1 | tee "$log" || rc=$?
	counts=$("$counter" "$log")
	rm -f "$log"
	# shellcheck disable=SC2086 # two numbers
	counted $counts "$rc"
}

check "scripts/check-deps.py (the module graph points one way; SQL and may stay home)" python3 scripts/check-deps.py
check "cargo fmt --all -- --check" cargo fmt --all -- --check
check "cargo clippy --all-targets --all-features${locked[*]:+ ${locked[*]}} -- -D warnings" \
	cargo clippy --all-targets --all-features "${locked[@]}" -- -D warnings

step "cargo test --all-targets --features external-tools --no-fail-fast${locked[*]:+ ${locked[*]}}${*:+ $*}"
counted_run cargo_counts cargo test --all-targets --features external-tools --no-fail-fast "${locked[@]}" "$@"
# --all-targets leaves the doctests out; one of them proves that two kinds of id cannot be
# swapped (src/ids.rs), by failing to compile.
echo "agentcard: the browser journeys' screenshots: $PWD/target/tmp/browser-screenshots" >&2
step "cargo test --doc --no-fail-fast${locked[*]:+ ${locked[*]}}${*:+ $*}"
counted_run cargo_counts cargo test --doc --no-fail-fast "${locked[@]}" "$@"

if ((run_recipes)); then
	for recipe in nginx varnish cloudflare; do
		step "recipes/$recipe/test.sh (the $recipe recipe against recipes/cases)"
		counted_run recipe_counts bash "recipes/$recipe/test.sh"
	done
	step "recipes/front/test.sh (nginx sending only agents to agentcard edge, against recipes/cases)"
	counted_run recipe_counts bash recipes/front/test.sh
	step "recipes/front-haproxy/test.sh (HAProxy sending only agents to agentcard edge, against recipes/cases)"
	counted_run recipe_counts bash recipes/front-haproxy/test.sh
	step "scripts/diff-edge.sh (the corpus of recipes/diff/ replayed, then 60 s of differential fuzzing against nginx and HAProxy)"
	counted_run recipe_counts diff_edge
fi

echo "total: $passed passed, $failed failed"
exit "$status"
