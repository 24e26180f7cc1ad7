#!/usr/bin/env bash
# Builds the bench preset, runs attention_bench in three rounds and writes bench/RESULTS.md and
# bench/results_gflops.png from them. Arguments go to attention_bench after the defaults (e.g.
# --benchmark_filter=...); ATTNGEN_BENCH_ROUNDS sets the number of rounds (default 3), and
# ATTNGEN_BENCH_AUTOSCHEDULED=OFF leaves out the autoscheduled baselines (ON by default, as in
# the bench preset; they take minutes to compile).
#
# Why rounds: each round reports the median of 7 repetitions of every benchmark, and
# make_results.py takes the median of the rounds' medians. The rounds are minutes apart, so a
# burst of load from another process moves one round's median of a benchmark, not the result;
# 21 repetitions in a row would all fall into the same burst. Each repetition runs for at least
# 0.2 s (Google Benchmark's default is 0.5 s): the shortest calls (a few ms) still repeat dozens
# of times, and a round takes about ten minutes instead of twenty. The shapes with modifiers at
# N = 16384, (w) and (p), add about as much again: each peer applies their mask densely to all
# N^2 pairs: 4.2-4.5 s a call at two threads for OpenBLAS and oneDNN, about 9 s with one core,
# torch about 12 s (8 calls per benchmark and round).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${ATTNGEN_BENCH_ROUNDS:-3}"
autoscheduled="${ATTNGEN_BENCH_AUTOSCHEDULED:-ON}"
./scripts/setup.sh --bench
# Given every time, because the value stays in the build's cache otherwise.
cmake --preset bench -DATTNGEN_BUILD_AUTOSCHEDULED="${autoscheduled}"
cmake --build --preset bench -j "$(nproc)"

# Debian 12's OpenBLAS (0.3.21) does not know the newest CPUs and serves them with older kernels:
# its Prescott (SSE3) sgemm on an Intel Xeon with AVX512-BF16 (family 6 model 207, 2026-12-06),
# 55 GFLOP/s at 2 threads against 146 with its Skylake-X kernels; its Haswell (AVX2) sgemm on an
# AMD Zen 5 (family 26, 2026-12-07), 196 against 317. The sgemm peak and the OpenBLAS peer then
# understate the machine, so every CPU with the AVX-512 subsets that the Skylake-X kernels use
# gets them. RESULTS.md names the kernels that OpenBLAS used; OPENBLAS_CORETYPE given by the
# caller is left as it is, and said so: the sandboxes this project is developed in export
# OPENBLAS_CORETYPE=Haswell, which kept the Haswell kernels on a Zen 5 in the run of 2026-12-07
# (`env -u OPENBLAS_CORETYPE ./bench/run.sh` lets this script choose).
if [[ -n "${OPENBLAS_CORETYPE:-}" ]]; then
    echo "bench: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE} from the environment is kept" \
        "(env -u OPENBLAS_CORETYPE ./bench/run.sh to let this script choose)"
elif grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo &&
    grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=SkylakeX
    echo "bench: OPENBLAS_CORETYPE=SkylakeX (see bench/run.sh)"
fi

outputs=()
status=0
for round in $(seq 1 "$rounds"); do
    out="build/bench/results-round${round}.json"
    echo "bench: round ${round} of ${rounds} -> ${out}"
    # attention_bench exits with 1 when a benchmark fails its check; the other benchmarks'
    # results are still written, and RESULTS.md lists the failures.
    build/bench/bench/attention_bench \
        --benchmark_repetitions=7 --benchmark_report_aggregates_only=true \
        --benchmark_min_time=0.2 \
        --benchmark_out="${out}" --benchmark_out_format=json "$@" || status=$?
    outputs+=("${out}")
done

# The checked-in tuning databases: RESULTS.md shows their tuned, default and autoscheduler times
# (measured by attngen tune when the database was written, not in these rounds).
tuning=()
for file in tuning/*.json; do
    [[ -f "${file}" ]] && tuning+=(--tuning "${file}")
done
/usr/bin/python3 bench/make_results.py "${outputs[@]}" "${tuning[@]}"
exit "${status}"
