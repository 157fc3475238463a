#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]: runs the fuzz targets of fuzz/ (all, or
# those named), one after the other, each for SECONDS_PER_TARGET seconds (default 600), at
# the lowest CPU priority. docs/fuzzing.md says what each target checks.
#
# 1. Installs cargo-fuzz with `cargo install --locked` when absent, and g++ from Debian's
#    packages when there is no C++ compiler (libfuzzer-sys compiles libFuzzer).
# 2. Builds every target first (cargo-fuzz's defaults: release, debug assertions,
#    AddressSanitizer), on the stable toolchain: RUSTC_BOOTSTRAP=1 lets it take the -Z flags
#    cargo-fuzz passes (docs/fuzzing.md, "Which tool and why").
# 3. Runs each target from its seeds (fuzz/corpus/<target>/, only read) and what earlier runs
#    kept (fuzz/work/<target>/, scratch, not in git). A crash (a failed property, a sanitizer
#    error, a leak, an input slower than FUZZ_TIMEOUT, memory over FUZZ_RSS_MB) stops that
#    target; its input is copied to fuzz/regressions/<target>/, which `cargo test` replays
#    (src/fuzzing.rs): commit it with its fix. The other targets still run.
# 4. Prints a line per target: seconds, executions, new inputs kept, crash or not; exits 1
#    when a target crashed. The full libFuzzer output is in fuzz/work/<target>.log.
#
# Knobs (environment): FUZZ_SANITIZER (address; `none` runs about twice as many inputs, and
# the code fuzzed has no unsafe block of its own), FUZZ_TIMEOUT seconds per input (10),
# FUZZ_RSS_MB (2048), FUZZ_NICE (19), FUZZ_TARGET_DIR (fuzz/target; CARGO_TARGET_DIR is not
# used: the fuzzed build has flags of its own and never shares the main build's folder).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/apt.sh
source scripts/lib/apt.sh

seconds=${1:-600}
if ! [[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]]; then
	echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2
	exit 2
fi
shift $(($# > 0 ? 1 : 0))

sanitizer=${FUZZ_SANITIZER:-address}
timeout=${FUZZ_TIMEOUT:-10}
rss_mb=${FUZZ_RSS_MB:-2048}
nice=(nice -n "${FUZZ_NICE:-19}")
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/fuzz/target}
export RUSTC_BOOTSTRAP=1

step() {
	printf '\n==> %s\n' "$*" >&2
}

if ! cargo fuzz --version >/dev/null 2>&1; then
	step "cargo install --locked cargo-fuzz"
	"${nice[@]}" cargo install --locked cargo-fuzz
fi
if ! command -v c++ >/dev/null 2>&1 && ! command -v clang++ >/dev/null 2>&1; then
	step "installing g++ (libfuzzer-sys compiles libFuzzer)"
	agentcard_apt_install g++
fi

mapfile -t known < <(cargo fuzz list)
targets=("$@")
((${#targets[@]} > 0)) || targets=("${known[@]}")
for target in "${targets[@]}"; do
	if ! grep -qxF -- "$target" <<<"$(printf '%s\n' "${known[@]}")"; then
		echo "scripts/fuzz.sh: no target '$target' (known: ${known[*]})" >&2
		exit 2
	fi
done

step "cargo fuzz build (sanitizer: $sanitizer)"
"${nice[@]}" cargo fuzz build --sanitizer "$sanitizer"

# The value of libFuzzer's final `stat::NAME: value` line in a log, or `?`.
stat() {
	sed -n "s/^stat::$1: *\([0-9]*\).*/\1/p" "$2" | tail -n 1 | grep . || echo '?'
}

crashed=()
summary=()
for target in "${targets[@]}"; do
	work=fuzz/work/$target
	artifacts=fuzz/artifacts/$target
	regressions=fuzz/regressions/$target
	log=fuzz/work/$target.log
	mkdir -p "$work" "$artifacts"
	stamp=$(mktemp)
	step "cargo fuzz run $target for ${seconds}s"
	status=0
	"${nice[@]}" cargo fuzz run --sanitizer "$sanitizer" "$target" "$work" "fuzz/corpus/$target" -- \
		-max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss_mb" \
		-print_final_stats=1 >"$log" 2>&1 || status=$?
	found=()
	while IFS= read -r -d '' file; do
		mkdir -p "$regressions"
		cp "$file" "$regressions/"
		found+=("$regressions/$(basename "$file")")
	done < <(find "$artifacts" -type f -newer "$stamp" -print0)
	rm -f "$stamp"
	result=ok
	if ((status != 0 || ${#found[@]} > 0)); then
		result="CRASH (exit $status) ${found[*]:-no input saved: see $log}"
		crashed+=("$target")
		grep -E '^(thread .* panicked|==[0-9]+==ERROR|SUMMARY)' "$log" | head -n 5 >&2 || true
	fi
	summary+=("$(printf '%-16s %6ss %12s executions %6s new inputs  %s' "$target" "$seconds" \
		"$(stat number_of_executed_units "$log")" "$(stat new_units_added "$log")" "$result")")
done

step "summary ($(date -u +%Y-%m-%dT%H:%MZ), sanitizer $sanitizer)"
printf '%s\n' "${summary[@]}"
if ((${#crashed[@]} > 0)); then
	echo "crashed: ${crashed[*]}; the inputs are in fuzz/regressions/, replayed by cargo test" >&2
	exit 1
fi
