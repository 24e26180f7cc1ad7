#!/usr/bin/env bash
# attngen_add_kernel's option checking: valid calls configure, and every misspelled option or
# invalid value fails the configure with a message that names it. Only configures (no kernel is
# compiled), so it takes seconds.
#
#   check_kernel_options.sh <dir of attngenConfig.cmake> <scratch dir> [cmake]
set -uo pipefail
config_dir="$1"
work="$2"
cmake="${3:-cmake}"
project="$(cd "$(dirname "$0")" && pwd)/options_project"
mkdir -p "$work"
failures=0

# configure <args of attngen_add_kernel>: configures the probe project, output in $work/log.
configure() {
    "$cmake" -S "$project" -B "$work/build" -G Ninja -Dattngen_DIR="$config_dir" \
        -DATTNGEN_ARGS="$1" > "$work/log" 2>&1
}

# accepts <args> [expected output]: the call configures (and prints the expected line, if given).
accepts() {
    if ! configure "$1"; then
        echo "FAIL: attngen_add_kernel($1) was refused:"; tail -n 20 "$work/log"
        failures=$((failures + 1))
    elif [ -n "${2:-}" ] && ! grep -qF -- "$2" "$work/log"; then
        echo "FAIL: attngen_add_kernel($1) configured without saying: $2"; tail -n 20 "$work/log"
        failures=$((failures + 1))
    else
        echo "ok: attngen_add_kernel($1) accepted"
    fi
}

# refuses <args> <expected message>: the configure fails and the message names the problem.
refuses() {
    if configure "$1"; then
        echo "FAIL: attngen_add_kernel($1) was accepted"
        failures=$((failures + 1))
    elif ! tr -s ' \n' ' ' < "$work/log" | grep -qF -- "$2"; then
        echo "FAIL: attngen_add_kernel($1) failed without the message: $2"; tail -n 20 "$work/log"
        failures=$((failures + 1))
    else
        echo "ok: attngen_add_kernel($1) refused: $2"
    fi
}

accepts "NAME k GENERATOR attention CAUSAL HEADS 8 KV_HEADS 2 HEAD_DIM 96 TARGETS host"
accepts "NAME k GENERATOR mha CAUSAL HEADS 4 SCHEDULE cpu_tiled"
# No database is installed for the target "host": TUNED falls back to the default schedule.
accepts "NAME k GENERATOR attention SCHEDULE TUNED TARGETS host" \
    "no tuning database"
refuses "NAME k GENERATOR attention HEAD_DIMS 64" "unknown option or stray value: HEAD_DIMS 64"
refuses "NAME k GENERATOR attention CASUAL" "unknown option or stray value: CASUAL"
refuses "NAME k GENERATOR atention" "GENERATOR must be attention or mha, got 'atention'"
refuses "GENERATOR attention" "NAME is required"
refuses "NAME 9k GENERATOR attention" "NAME must be a C identifier"
refuses "NAME k GENERATOR attention HEAD_DIM" "HEAD_DIM needs a value"
refuses "NAME k GENERATOR attention HEADS eight" "HEADS must be a positive integer, got 'eight'"
refuses "NAME k GENERATOR attention HEADS 8 KV_HEADS 3" "KV_HEADS 3 does not divide HEADS 8"
refuses "NAME k GENERATOR mha PROBS" "PROBS applies to GENERATOR attention only"
refuses "NAME k GENERATOR attention SCHEDULE cpu-fused" "SCHEDULE must be a schedule name or TUNED"
refuses "NAME k GENERATOR attention TARGETS x86_64" "'x86_64' is not a Halide target"
refuses "NAME k GENERATOR attention TARGETS arm-64-linux" \
    "target 'arm-64-linux' is arm-64-linux, but the installed attngen runtime"
refuses "NAME k GENERATOR attention TARGETS host-cuda" "names CUDA features: write the CUDA option"
refuses "NAME k GENERATOR attention CUDA_CAPABILITY 80" "CUDA_CAPABILITY needs the CUDA option"
# CUDA kernels need the shared Halide runtime to have CUDA support (ATTNGEN_RUNTIME_CUDA).
if grep -q 'set(attngen_RUNTIME_CUDA TRUE)' "$config_dir/attngenConfig.cmake"; then
    accepts "NAME k GENERATOR attention CUDA TARGETS host"
    refuses "NAME k GENERATOR attention CUDA CUDA_CAPABILITY 90" \
        "CUDA_CAPABILITY 90 is not one of Halide 14's"
else
    refuses "NAME k GENERATOR attention CUDA" "rebuild attngen with -DATTNGEN_RUNTIME_CUDA=ON"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures case(s) failed"
    exit 1
fi
echo "attngen_add_kernel: every case behaved"
