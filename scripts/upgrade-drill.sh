#!/usr/bin/env bash
# scripts/upgrade-drill.sh [REF]: an upgrade across the migrations of sql/, under load, done as
# an operator does one: does any request fail, is any count lost?
#
# 1. Builds the previous release, REF, in a temporary git worktree (default: the commit before
#    the one that added the newest file of sql/), and the checkout, the new release; both with
#    cargo's release settings (LTO off whatever REF's Cargo.toml says), REF in a target folder
#    of its own (target/upgrade-previous/, kept for the next drill). Prints the migrations the new release
#    adds.
# 2. Starts a PostgreSQL cluster of its own (a temporary folder, port 18250), migrates it and
#    makes the demo data with the previous release.
# 3. Starts INSTANCES (3) of the previous release on 127.0.0.1:18201… behind HAProxy on
#    127.0.0.1:18200 (checks of /ready every second, fall 2, rise 2; scripts/lib/fleet.sh, as
#    scripts/fleet.sh runs them), and wrk through HAProxy (GET /fragment, a card served).
# 4. Under that load, each step timed:
#      migrate    the new release's `agentcard migrate`, while the previous release serves;
#      replace I  instance I: SIGTERM (the drain), its exit, the new release started in its
#                 place, until HAProxy sees it UP again; one instance after the other.
#    SETTLE seconds of load before the first step and after the last.
# 5. Stops wrk and the instances (SIGTERM, each must exit 0) and prints the failed requests
#    (non-2xx answers and socket errors; target 0), the report's count against the requests
#    the instances answered (HAProxy's count of the backend's responses; target: equal), and
#    each step's time. Exits non-zero when a request failed, the counts differ or an instance
#    exited with another status than 0.
#
# It builds twice and takes minutes: scripts/test.sh does not run it. wrk, curl, HAProxy and
# PostgreSQL's server are installed from Debian's packages when absent (scripts/lib/apt.sh).
# Knobs (environment): INSTANCES (3), CONNECTIONS (64), THREADS wrk threads (2), DRAIN_MS each
# instance's AGENTCARD_DRAIN_MS (5000), SETTLE seconds (5).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
readonly BENCH_NAME=upgrade-drill
# shellcheck source=scripts/lib/postgres.sh
source scripts/lib/postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

readonly LB_PORT=18200 FIRST_PORT=18201 PG_PORT=18250 STATS_PORT=18299
readonly DATABASE=agentcard_upgrade
readonly AGENT_UA="GPTBot/1.2"

case ${1:-} in
-h | --help)
	bench_usage scripts/upgrade-drill.sh
	exit 0
	;;
esac
newest=$(find sql -name '[0-9]*.sql' | sort | tail -n 1)
if [[ -n ${1:-} ]]; then
	REF=$1
else
	REF=$(git log -1 --format=%H --diff-filter=A -- "$newest")^
fi
git rev-parse --verify --quiet "$REF^{commit}" >/dev/null || die "$REF is not a commit of this repository"
SETTLE=$(knob SETTLE "${SETTLE:-5}" 600)

# shellcheck source=scripts/lib/fleet.sh
source scripts/lib/fleet.sh
fleet_setup agentcard-upgrade-drill

PREVIOUS=$WORKDIR/previous
cleanup() {
	[[ -d $PREVIOUS ]] && git worktree remove --force "$PREVIOUS" >/dev/null 2>&1
	fleet_cleanup
}

declare -a STEPS=()
STEP_STARTED=0
step_start() {
	STEP_NAME=$1
	STEP_STARTED=$(date +%s%3N)
}
step_end() {
	STEPS+=("$STEP_NAME	$(($(date +%s%3N) - STEP_STARTED))")
	echo "$STEP_NAME: $(($(date +%s%3N) - STEP_STARTED)) ms"
}

# build_at DIR TARGET BIN: the release build of the checkout in DIR, in the target folder
# TARGET, copied to BIN. Each release has a target folder of its own: in a shared one, cargo
# finds the second release's own build fresh and leaves the first one's binary where the
# second's is looked for (target/release/agentcard), so both "releases" were the first.
build_at() {
	echo "cargo build --release --locked --bin agentcard (in $1, into $2; LTO off, 16 codegen units)"
	(cd "$1" && CARGO_TARGET_DIR=$2 CARGO_PROFILE_RELEASE_LTO=false \
		CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 cargo build --release --locked --bin agentcard)
	cp "$2/release/agentcard" "$3"
}

section "the previous release, $(git log -1 --format='%h %s' "$REF"), and this checkout"
ensure_fleet_tools
step_start "build the previous release"
git worktree add --detach --quiet "$PREVIOUS" "$REF"
build_at "$PREVIOUS" "${CARGO_TARGET_DIR:-$PWD/target}/upgrade-previous" "$WORKDIR/agentcard-previous"
step_end
step_start "build the new release"
build_at "$PWD" "${CARGO_TARGET_DIR:-$PWD/target}" "$WORKDIR/agentcard-new"
step_end
if cmp -s "$WORKDIR/agentcard-previous" "$WORKDIR/agentcard-new"; then
	die "the previous and the new release are the same binary: nothing would be drilled"
fi
mapfile -t adds < <(comm -13 <(cd "$PREVIOUS/sql" && printf '%s\n' *.sql) <(cd sql && printf '%s\n' *.sql))
echo "migrations the new release adds: ${adds[*]:-none (the drill then replaces the binary only)}"
"$WORKDIR/agentcard-previous" --version || echo "(the previous release has no --version)"
"$WORKDIR/agentcard-new" --version

section "the previous release's fleet"
cluster_create
PGCONNECT_TIMEOUT=10 psql -X -w -q -d "postgres://postgres@127.0.0.1:$PG_PORT/postgres" \
	-c "CREATE DATABASE $DATABASE"
DB_URL=postgres://postgres@127.0.0.1:$PG_PORT/$DATABASE
AGENTCARD_BIN=$WORKDIR/agentcard-previous
DATABASE_URL=$DB_URL "$AGENTCARD_BIN" migrate >/dev/null
DATABASE_URL=$DB_URL "$AGENTCARD_BIN" admin demo >"$WORKDIR/demo.json"
read_demo
start_fleet

section "the upgrade, under load"
start_load upgrade
sleep "$SETTLE"
step_start "migrate (new release, the previous one serving)"
DATABASE_URL=$DB_URL "$WORKDIR/agentcard-new" migrate
step_end
AGENTCARD_BIN=$WORKDIR/agentcard-new
for ((i = 0; i < INSTANCES; i++)); do
	step_start "replace instance $i"
	stop_instance "$i"
	start_instance "$i"
	wait_up "$i"
	step_end
done
sleep "$SETTLE"
stop_load

section "stop: every instance by SIGTERM"
answered=$(backend_responses)
for ((i = 0; i < INSTANCES; i++)); do
	stop_instance "$i"
done
counted=$(report_total)
read -r _ requests non2xx errors < <(tail -n 1 "$RESULTS")
failed=$((non2xx + errors))

section "upgrade from $(git log -1 --format=%h "$REF") across ${adds[*]:-no migration}: $INSTANCES instances behind HAProxy, $CONNECTIONS connections, drain $DRAIN_MS ms"
machine
print_phases
printf '%-52s %10s\n' step ms
for line in "${STEPS[@]}"; do
	IFS=$'\t' read -r name took <<<"$line"
	printf '%-52s %10s\n' "$name" "$took"
done
echo "failed requests: $failed of $requests (target 0)"
echo "requests answered by the instances: $answered; counted by the report: $counted (target: equal)"
echo "instances that exited with a status other than 0: $BAD_EXITS"
((failed == 0 && answered == counted && BAD_EXITS == 0)) || die "the upgrade failed requests or lost counts"
echo "upgrade-drill: 0 failed, counts exact"
