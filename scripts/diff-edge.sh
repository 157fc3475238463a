#!/usr/bin/env bash
# scripts/diff-edge.sh: differential fuzzing of HTTP/1.1 framing (recipes/diff/): generated
# request streams sent through the echo origin directly, nginx, HAProxy, `agentcard edge`, and
# the edge behind nginx and behind HAProxy, what reached the origin compared chain by chain.
#
#   scripts/diff-edge.sh [--minutes N] [--streams N] [--seed S] [--lanes N] [--summary FILE]
#   scripts/diff-edge.sh --replay
#
# Generation stops at N minutes (1 by default) or N streams, whichever comes first; a finding
# is minimised and written to recipes/diff/findings/ (a `FAIL` line). --replay sends every
# stream of recipes/diff/corpus/ once and expects no finding. Builds the dev binary (cargo build
# --bin agentcard; AGENTCARD_BIN=PATH to use another) and installs nginx and HAProxy (Debian's)
# when absent. Everything listens on loopback ports. Exit 0 when there was no finding.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH_NAME=scripts/diff-edge.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

mode=run
args=()
while (($#)); do
	case $1 in
	--replay) mode=replay; shift ;;
	--minutes | --streams | --seed | --lanes | --summary)
		(($# >= 2)) || die "$1 needs a value"
		args+=("$1" "$2")
		shift 2
		;;
	-h | --help) bench_usage "$0"; exit 0 ;;
	*) bench_usage "$0" >&2; exit 2 ;;
	esac
done
if [[ $mode == replay && ${#args[@]} -gt 0 ]]; then
	die "--replay takes no other option"
fi

missing=()
nginx_binary >/dev/null || missing+=(nginx)
command -v haproxy >/dev/null || [[ -x /usr/sbin/haproxy ]] || missing+=(haproxy)
if ((${#missing[@]} > 0)); then
	agentcard_apt_install "${missing[@]}" || die "the harness needs ${missing[*]} (Debian's packages)"
fi
if [[ -z ${AGENTCARD_BIN:-} ]]; then
	locked=()
	[[ -f Cargo.lock ]] && locked=(--locked)
	cargo build "${locked[@]}" --bin agentcard
	AGENTCARD_BIN=${CARGO_TARGET_DIR:-target}/debug/agentcard
fi
[[ -x $AGENTCARD_BIN ]] || die "no agentcard binary at $AGENTCARD_BIN"
export PATH=$PATH:/usr/sbin

exec python3 recipes/diff/diff.py "$mode" --edge-bin "$AGENTCARD_BIN" "${args[@]}"
