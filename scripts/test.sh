#!/usr/bin/env bash
# scripts/test.sh [CARGO TEST ARGS...]: all checks and tests, stopping at the
# first failure: the module graph (scripts/check-deps.py: no cycle between src/'s
# top-level modules, db/ above nothing), rustfmt, clippy (warnings are errors),
# cargo test (after installing Python's prometheus_client, the parser the
# /metrics tests read scrapes with, when it is missing).
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh fragment`).
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

# tests/it/metrics.rs reads /metrics with Prometheus's own parsers and fails without them.
install_metrics_parser() {
	python3 -c 'import prometheus_client' 2>/dev/null && return 0
	local pip=(python3 -m pip install --quiet --disable-pip-version-check)
	"${pip[@]}" prometheus_client 2>/dev/null ||
		"${pip[@]}" --user prometheus_client 2>/dev/null ||
		"${pip[@]}" --user --break-system-packages prometheus_client 2>/dev/null ||
		"${pip[@]}" --break-system-packages prometheus_client
}

step "python3: prometheus_client (the /metrics tests' parser)"
install_metrics_parser

step "cargo test --all-targets${locked[*]:+ ${locked[*]}}${*:+ $*}"
status=0
log=$(mktemp)
cargo test --all-targets "${locked[@]}" "$@" 2>&1 | tee "$log" || status=$?

drop_leftover_test_databases

# One closing line for the whole run: cargo prints a summary per test binary, and the last
# binaries (the CLI, the benchmarks in test mode) hold no tests.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i - 1); if ($(i) ~ /^failed;?$/) f += $(i - 1) } }
     END { printf "all tests: %d passed, %d failed\n", p, f }' "$log"
rm -f "$log"
exit "$status"
