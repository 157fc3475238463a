#!/usr/bin/env bash
# scripts/test.sh [CARGO TEST ARGS...]: all checks and tests, stopping at the
# first failure: the module graph (scripts/check-deps.py: no cycle between src/'s
# top-level modules, db/ above nothing), rustfmt, clippy (warnings are errors),
# cargo test (after installing, when missing, the Python packages two tests
# run: prometheus_client, the parser of /metrics, and schemathesis), then the
# edge recipes' tests, each against the shared cases of edge/cases/ in its real
# runtime (edge/<recipe>/test.sh installs nginx, Varnish or workerd when absent), and
# edge/front/test.sh, nginx in front of a release build of `agentcard edge`.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh fragment`), and
# then the recipes are not run.
#
# Tests get AGENTCARD_TEST_PG_URL, a PostgreSQL server where they may create
# databases (see scripts/lib/postgres.sh for how it is found): the harness
# creates a fresh database per run and drops it. Afterwards this script drops
# leftover agentcard_test_* databases that nobody is connected to.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh

agentcard_find_postgres
export AGENTCARD_TEST_PG_URL="$AGENTCARD_PG_URL"

# In CI, don't leave behind a private cluster this run started.
if [[ -n ${CI:-} ]]; then
	trap 'agentcard_stop_private_postgres >/dev/null 2>&1 || true' EXIT
fi

locked=()
[[ -f Cargo.lock ]] && locked=(--locked)

step() {
	printf '\n==> %s\n' "$*" >&2
}

drop_leftover_test_databases() {
	# No ON_ERROR_STOP: a database someone connected to meanwhile fails to
	# drop (DROP DATABASE without FORCE refuses) and the others still go.
	if ! PGCONNECT_TIMEOUT=10 psql -X -w -q -d "$AGENTCARD_PG_URL" <<'SQL'; then
SELECT format('DROP DATABASE IF EXISTS %I', d.datname)
FROM pg_database d
WHERE d.datname LIKE 'agentcard\_test\_%'
  AND NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.datname = d.datname) \gexec
SQL
		echo "agentcard: warning: could not drop leftover test databases" >&2
	fi
}

step "scripts/check-deps.py (the module graph points one way)"
python3 scripts/check-deps.py

step "cargo fmt --all -- --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets${locked[*]:+ ${locked[*]}} -- -D warnings"
cargo clippy --all-targets "${locked[@]}" -- -D warnings

# Installs a Python package from PyPI: into the interpreter's packages, else the user's (a
# Debian Python refuses both unless told --break-system-packages); pyenv then rehashes, and
# the user's bin joins PATH, so that a command the package brings is found.
pip_install() {
	local pip=(python3 -m pip install --quiet --disable-pip-version-check "$1")
	PIP_ROOT_USER_ACTION=ignore "${pip[@]}" ||
		PIP_ROOT_USER_ACTION=ignore "${pip[@]}" --user ||
		PIP_ROOT_USER_ACTION=ignore "${pip[@]}" --user --break-system-packages
	if command -v pyenv >/dev/null; then pyenv rehash; fi
	PATH="$PATH:$(python3 -c 'import site; print(site.getuserbase())')/bin"
}

# tests/it/metrics.rs reads /metrics with Prometheus's own parsers and fails without them.
step "python3: prometheus_client (the /metrics tests' parser)"
python3 -c 'import prometheus_client' 2>/dev/null || pip_install prometheus_client

# tests/it/schema.rs runs schemathesis against the server: this version, installed when `st`
# is missing or another one.
SCHEMATHESIS_VERSION=4.32.5
step "schemathesis $SCHEMATHESIS_VERSION (tests/it/schema.rs runs it)"
if [[ $(st --version 2>/dev/null) != *"version $SCHEMATHESIS_VERSION" ]]; then
	pip_install "schemathesis==$SCHEMATHESIS_VERSION"
	st --version
fi

step "cargo test --all-targets${locked[*]:+ ${locked[*]}}${*:+ $*}"
status=0
log=$(mktemp)
cargo test --all-targets "${locked[@]}" "$@" 2>&1 | tee "$log" || status=$?

drop_leftover_test_databases

# One closing line for the whole run: cargo prints a summary per test binary, and the last
# binaries (the CLI, the benchmarks in test mode) hold no tests.
# The recipes of edge/, each in its real runtime, on the same cases as tests/it/edge.rs.
if ((status == 0 && $# == 0)); then
	for recipe in nginx varnish cloudflare; do
		step "edge/$recipe/test.sh (the $recipe recipe against edge/cases)"
		bash "edge/$recipe/test.sh" || status=$?
	done
	step "edge/front/test.sh (nginx sending only agents to agentcard edge, against edge/cases)"
	bash edge/front/test.sh || status=$?
fi

awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i - 1); if ($(i) ~ /^failed;?$/) f += $(i - 1) } }
     END { printf "all tests: %d passed, %d failed\n", p, f }' "$log"
rm -f "$log"
exit "$status"
