#!/usr/bin/env bash
# scripts/bench-report.sh: how long `agentcard admin report` takes over 30 days of an
# organisation with 10 000 sites, 1 000 000 fragments and 100 000 000 requests in its counters
# (the report layer the console's Reports page calls; target: under 500 ms).
#
# 1. Creates database `agentcard_bench_report` afresh on the PostgreSQL server
#    scripts/lib/postgres.sh finds, builds the release binary, migrates, and loads
#    scripts/bench-report.sql (the counters as aggregated rows: 268 800 hourly and 19 200
#    minute rows per organisation, for two organisations; see the file).
# 2. Runs `admin report --since 30d` in total and `--by` day, hour, agent, site, fragment and
#    page, ROUNDS times each (alternating), and prints per grouping the median wall time of the
#    command (process start, connection, queries, JSON printed), its groups and the requests it
#    counted. A run over the service's 5 s statement timeout counts as "failed".
# 3. Runs examples/report_page.rs: what the console's Reports page reads for the last 30 days
#    (`ops::reports::view`: totals and chart by day, the top 100 groups of the view and all
#    others, the no-fill reasons' fragments, the unmatched User-Agents), ROUNDS times per view
#    in one process, and prints the median time of the call per view.
# 4. Drops the database.
#
# Knobs (environment): ROUNDS (5), DATABASE_URL (see scripts/lib/postgres.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=bench-report
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

readonly DATABASE=agentcard_bench_report
readonly ORG=acc_benchreport0000000000000

bench_args scripts/bench-report.sh "$@"
ROUNDS=$(knob ROUNDS "${ROUNDS:-5}" 100)

drop_database() {
	[[ -n ${BENCH_URL:-} ]] || return 0
	PGCONNECT_TIMEOUT=10 psql -X -w -q -d "$AGENTCARD_PG_URL" -c 'SET client_min_messages = warning' \
		-c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)" || true
}
trap drop_database EXIT

# report_ms ARGS...: one run's wall time in ms, or "failed"; its output kept in $OUT.
report_ms() {
	local start=$EPOCHREALTIME
	if ! DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" admin report --org "$ORG" --since 30d --format json "$@" >"$OUT" 2>/dev/null; then
		echo failed
		return 0
	fi
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
}

main() {
	machine
	section "Database and build"
	fresh_database "$DATABASE"
	build_profile --bin agentcard --example report_page
	DATABASE_URL=$BENCH_URL "$AGENTCARD_BIN" migrate >/dev/null
	section "Data set (scripts/bench-report.sql)"
	local start=$EPOCHREALTIME
	psql_bench -f scripts/bench-report.sql >/dev/null
	echo "load time: $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	psql_bench -At -F ' ' -c "SELECT (SELECT count(*) FROM sites), (SELECT count(*) FROM fragments),
		(SELECT count(*) FROM report_hours WHERE org_id = '$ORG'),
		(SELECT count(*) FROM report_minutes WHERE org_id = '$ORG'),
		(SELECT count(*) FROM report_pages WHERE org_id = '$ORG'),
		(SELECT sum(requests) FROM report_hours WHERE org_id = '$ORG')
		+ (SELECT sum(requests) FROM report_minutes WHERE org_id = '$ORG')" |
		awk '{ printf "loaded: %s sites, %s fragments; the organisation: %s hour rows, %s minute rows, %s page rows, %s requests\n", $1, $2, $3, $4, $5, $6 }'

	section "admin report --since 30d: median of $ROUNDS runs each"
	OUT=$(mktemp)
	local by round results
	results=$(mktemp)
	local -a groupings=(total day hour agent site fragment page)
	for ((round = 1; round <= ROUNDS; round++)); do
		for by in "${groupings[@]}"; do
			if [[ $by == total ]]; then
				echo "$by $(report_ms)" >>"$results"
			else
				echo "$by $(report_ms --by "$by")" >>"$results"
			fi
		done
	done
	printf '%-10s %10s %10s %14s\n' grouping "median ms" groups requests
	for by in "${groupings[@]}"; do
		if [[ $by == total ]]; then report_ms >/dev/null; else report_ms --by "$by" >/dev/null; fi
		printf '%-10s %10s %10s %14s %s\n' "$by" \
			"$(awk -v b="$by" '$1 == b && $2 != "failed" { print $2 }' "$results" | median_of -)" \
			"$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("groups", [])))' "$OUT" 2>/dev/null || echo -)" \
			"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$OUT" 2>/dev/null || echo -)" \
			"$(awk -v b="$by" '$1 == b && $2 == "failed" { n++ } END { if (n) printf "(%d failed)", n }' "$results")"
	done
	rm -f "$OUT" "$results"

	section "The console's Reports page, last 30 days (examples/report_page.rs): $ROUNDS rounds"
	DATABASE_URL=$BENCH_URL "$TARGET_DIR/examples/report_page" "$ORG" "$ROUNDS"
}

main
