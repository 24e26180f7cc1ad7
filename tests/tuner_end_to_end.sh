#!/usr/bin/env bash
# attngen tune end to end: a few seconds of tuning on tiny shapes write a database; a build of
# attngen reads it and compiles the tuned kernels; those kernels pass the correctness list.
#   tuner_end_to_end.sh <attngen> <source dir> <native build dir> [<budget in s>]
set -euo pipefail
attngen="$1"
source_dir="$2"
native_build="$3"
budget="${4:-24}"
work=$(mktemp -d)
trap '[ "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

# Two buckets: a grouped-query one with head dim 24, and causal decode steps.
# --min-speedup 0 keeps the fastest candidate other than the default even when a few seconds of
# search find nothing faster (on a busy machine they often do not): this test is about the path
# from the database to compiled, correct kernels, not about the search finding a speedup.
"$attngen" tune --shapes "h=4,kv=2,nq=256,d=24" "h=8,nq=1,nk=4096,d=24,causal" --budget "$budget" \
    --no-autoschedulers --runs 5 --min-speedup 0 --out "$work/tuning.json" > "$work/tune.log"
cat "$work/tune.log"
grep -q '"format": "attngen-tuning/1"' "$work/tuning.json"
# The tuner measured for the most capable of the build's targets that this machine runs; the
# database names it, and the build below compiles for it alone.
target=$(sed -n 's/^  "target": "\(.*\)",\{0,1\}$/\1/p' "$work/tuning.json")
[ -n "$target" ] || { echo "the database names no target" >&2; exit 1; }
echo "target: $target"
"$attngen" tune --report "$work/tuning.json"

# A build that compiles cpu_fused's generic kernels and the database's; the generators come from
# the native build.
cmake -S "$source_dir" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DATTNGEN_TARGETS="$target" -DATTNGEN_KERNEL_SET=minimal \
    -DATTNGEN_TUNING_FILES="$work/tuning.json" -DATTNGEN_BUILD_TOOLS=OFF \
    -Dattngen-halide_generators_ROOT="$native_build/cmake" > "$work/configure.log" ||
    { tail -n 40 "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --target runtime_test > "$work/build.log" ||
    { grep -A 20 -m 3 FAILED "$work/build.log" >&2; exit 1; }

# The tuned kernels are in the registry (their names end in _t<hash of the parameters>_<schedule>)
# and each passes KernelTest: selected for matching calls, out, lse and probs against fp64.
tests=$("$work/build/tests/runtime_test" --gtest_list_tests --gtest_filter='Compiled/*') ||
    { echo "runtime_test could not list its tests" >&2; exit 1; }
echo "$tests" | grep -E '_t[0-9a-f]{6}_cpu_' || { echo "no tuned kernel in the build" >&2; exit 1; }
"$work/build/tests/runtime_test" --gtest_filter='Compiled/*:Schedules/AttentionTest.*/cpu_fused'
