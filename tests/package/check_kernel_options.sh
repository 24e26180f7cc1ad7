#!/usr/bin/env bash
# attngen_add_kernel's option checking: valid calls configure, and every misspelled option or
# invalid value fails the configure with a message that names it. Only configures (no kernel is
# compiled), so it takes seconds.
#
#   check_kernel_options.sh <dir of attngenConfig.cmake> <scratch dir> [cmake]
set -uo pipefail
mkdir -p "$2"
config_dir="$(cd "$1" && pwd)"
work="$(cd "$2" && pwd)"
cmake="${3:-cmake}"
project="$(cd "$(dirname "$0")" && pwd)/options_project"
failures=0

# A tuning database for SCHEDULE TUNED, in the format `attngen tune` writes (the fields the build
# reads): a causal head-dim-96 bucket, a generic causal one and a bfloat16 causal head-dim-64 one
# whose winners beat the default, and a generic non-causal one whose winner did not.
tuned_target=x86-64-linux-avx-avx2-f16c-fma-sse41
mkdir -p "$work/tuning"
bucket() {  # variant improves
    printf '{"variant": "%s", "improves": %s}' "$@"
}
cat > "$work/tuning/$tuned_target.json" <<JSON
{"format": "attngen-tuning/2", "target": "$tuned_target", "buckets": [
  $(bucket op:attention,storage:f32,mask:none,schedule:cpu_fused,tuning:key_tile:5 false),
  $(bucket op:attention,storage:f32,mask:causal,schedule:cpu_fused,tuning:value_tile:8 true),
  $(bucket op:attention,storage:f32,mask:causal,d_k:96,d_v:96,schedule:cpu_fused,tuning:key_tile:6+query_vectors:2 true),
  $(bucket op:attention,storage:bf16,mask:causal,d_k:64,d_v:64,schedule:cpu_fused,tuning:key_tile:7 true)]}
JSON
# And a file in the place of another target's database that is not one.
echo '{"format": "something else"}' > "$work/tuning/x86-64-linux-sse41.json"

# configure <args of attngen_add_kernel>: configures the probe project, output in $work/log.
configure() {
    "$cmake" -S "$project" -B "$work/build" -G Ninja -Dattngen_DIR="$config_dir" \
        -Dattngen_TUNING_DIR="$work/tuning" -DATTNGEN_ARGS="$1" > "$work/log" 2>&1
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

accepts "NAME k OP attention MASK causal HEADS 8 KV_HEADS 2 D_K 96 TARGETS host"
accepts "NAME k OP mha MASK causal HEADS 4 SCHEDULE cpu_tiled"
# Left out, the name says what varies.
accepts "OP attention D_K 64 TARGETS host"
# SCHEDULE TUNED: the bucket of the kernel's own head dims, else the generic one of its mask, else
# (none improving, no database for the target, an mha kernel) the default schedule.
accepts "NAME k OP attention MASK causal D_K 96 SCHEDULE TUNED TARGETS $tuned_target" \
    "SCHEDULE TUNED: cpu_fused key_tile:6+query_vectors:2 from"
accepts "NAME k OP attention MASK causal D_K 32 SCHEDULE TUNED TARGETS $tuned_target" \
    "SCHEDULE TUNED: cpu_fused value_tile:8 from $work/tuning/$tuned_target.json, for $tuned_target"
# Storage types are part of a bucket: a bfloat16 kernel takes the bfloat16 bucket, and a float32
# one of the same mask and head dims does not.
accepts "NAME k OP attention STORAGE bf16 MASK causal D_K 64 SCHEDULE TUNED TARGETS $tuned_target" \
    "SCHEDULE TUNED: cpu_fused key_tile:7 from"
accepts "NAME k OP attention MASK causal D_K 64 SCHEDULE TUNED TARGETS $tuned_target" \
    "SCHEDULE TUNED: cpu_fused value_tile:8 from"
# The parameters were measured on the first target: the others compile the defaults.
accepts "NAME k OP attention MASK causal SCHEDULE TUNED TARGETS $tuned_target x86-64-linux-sse41" \
    "for $tuned_target; its other targets take the schedule's defaults"
accepts "NAME k OP attention D_K 64 SCHEDULE TUNED TARGETS $tuned_target" \
    "has no improving bucket for this kernel; using the default schedule cpu_fused"
accepts "NAME k OP attention SCHEDULE TUNED TARGETS host" \
    "no tuning database"
accepts "NAME k OP mha SCHEDULE TUNED TARGETS $tuned_target" \
    "hold attention kernels only; using the default schedule cpu_fused"
refuses "NAME k OP attention SCHEDULE TUNED TARGETS x86-64-linux-sse41" \
    "x86-64-linux-sse41.json is not an attngen tuning database"
refuses "NAME k OP attention HEAD_DIM 64" "unknown option or stray value: HEAD_DIM 64"
refuses "NAME k OP attention CAUSAL" "unknown option or stray value: CAUSAL"
refuses "NAME k OP attention TARGETS host CASUAL" \
    "'CASUAL' in TARGETS is not a Halide target: a misspelled option?"
refuses "NAME k OP atention" "OP must be one of attention, mha, projection, scores, softmax, weighted_sum, got 'atention'"
refuses "NAME k" "OP must be one of"
refuses "NAME 9k OP attention" "NAME must be a C identifier"
refuses "NAME k OP attention D_K" "D_K needs a value"
refuses "NAME k OP attention HEADS eight" "HEADS must be a positive integer, got 'eight'"
refuses "NAME k OP attention HEADS 8 KV_HEADS 3" "KV_HEADS 3 does not divide HEADS 8"
refuses "NAME k OP mha PROBS" "PROBS applies to OP attention only"
refuses "NAME k OP attention MASK causal,window" "MASK must be none or mask kinds joined by '+'"
refuses "NAME k OP attention SCHEDULE cpu-fused" "SCHEDULE must be a schedule name or TUNED"
refuses "NAME k OP attention KEYS_ESTIMATE 512" "KEYS_ESTIMATE applies to Halide's autoschedulers only"
refuses "NAME k OP attention TARGETS x86_64" "'x86_64' is not a Halide target"
refuses "NAME k OP attention TARGETS arm-64-linux" \
    "target 'arm-64-linux' is arm-64-linux, but the attngen runtime"
refuses "NAME k OP attention TARGETS host-cuda" "names CUDA features: write the CUDA option"
refuses "NAME k OP attention CUDA_CAPABILITY 80" "CUDA_CAPABILITY needs the CUDA option"
# User-written modifiers (modifier.cpp beside the probe project's CMakeLists.txt).
accepts "NAME k OP attention SCORE_MOD modifier.cpp:scaled INPUTS table:f32:2 TARGETS host"
refuses "NAME k OP attention SCORE_MOD modifier.cpp" "SCORE_MOD must be file.cpp:function"
refuses "NAME k OP attention MASK_MOD missing.cpp:rule" "MASK_MOD: no file"
refuses "NAME k OP mha SCORE_MOD modifier.cpp:scaled" "SCORE_MOD applies to OP attention only"
refuses "NAME k OP attention INPUTS table:f32:2" "INPUTS are read by user modifiers"
refuses "NAME k OP attention SCORE_MOD modifier.cpp:scaled INPUTS table:f64:2" \
    "INPUTS: 'table:f64:2' is not name:type:rank"
# CUDA kernels need the shared Halide runtime to have CUDA support (ATTNGEN_RUNTIME_CUDA).
if grep -q 'set(attngen_RUNTIME_CUDA TRUE)' "$config_dir/attngenConfig.cmake"; then
    accepts "NAME k OP attention CUDA TARGETS host"
    refuses "NAME k OP attention CUDA CUDA_CAPABILITY 90" \
        "CUDA_CAPABILITY 90 is not one of Halide 14's"
else
    refuses "NAME k OP attention CUDA" "rebuild attngen with -DATTNGEN_RUNTIME_CUDA=ON"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures case(s) failed"
    exit 1
fi
echo "attngen_add_kernel: every case behaved"
