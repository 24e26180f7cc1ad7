#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time from its checked-in seed corpus:
#
#   ./scripts/fuzz.sh [seconds per target, default 60] [target...]
#
# Targets: npy_fuzz (the .npy reader) and attention_fuzz (the runtime's public API against the
# fp64 reference). They are built by the asan-ubsan preset (scripts/test-sanitizers.sh builds
# it; this script builds only what is missing, the release build whose kernels it reuses
# first). New inputs go to build/asan-ubsan/fuzz-work/, never into fuzz/corpus/. A crash, sanitizer report, mismatch or timeout stops the target,
# leaves the input in build/asan-ubsan/fuzz-artifacts/ and makes this script fail: copy that
# file into fuzz/corpus/<target>/ with the fix, and ctest's fuzz_corpus_<target> replays it from
# then on.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(npy_fuzz attention_fuzz)

./scripts/setup.sh --sanitizers
# The asan-ubsan build reuses the release build's kernels (scripts/test-sanitizers.sh).
./scripts/build.sh release >/dev/null
cmake --preset asan-ubsan >/dev/null
cmake --build --preset asan-ubsan -j "$(nproc)" --target "${targets[@]}"

build=build/asan-ubsan
status=0
for target in "${targets[@]}"; do
    work="$build/fuzz-work/$target"
    artifacts="$build/fuzz-artifacts/$target/"
    mkdir -p "$work" "$artifacts"
    start=$SECONDS
    # -timeout: one input running longer than 20 s is a finding (a hang), not a slow input.
    # The first corpus directory receives new inputs; the seeds are only read.
    if ! ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        "$build/fuzz/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "fuzz/corpus/$target" \
        >"$build/fuzz-$target.log" 2>&1; then
        status=1
        echo "fuzz: $target FAILED after $((SECONDS - start)) s; input in $artifacts" >&2
        grep -E -m 20 "attention_fuzz:|npy_fuzz:|ERROR|SUMMARY|runtime error" \
            "$build/fuzz-$target.log" >&2 || tail -n 30 "$build/fuzz-$target.log" >&2
    else
        runs=$(grep -E -o 'stat::number_of_executed_units: *[0-9]+' "$build/fuzz-$target.log" |
               grep -E -o '[0-9]+$' || echo "?")
        echo "fuzz: $target clean: $runs inputs in $((SECONDS - start)) s"
    fi
done
exit $status
