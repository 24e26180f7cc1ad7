#!/usr/bin/env bash
# Checks that the ARM64 kernels compute with NEON: every object of the cpu_fused and cpu_tiled
# attention kernels must contain vector FMAs on four float lanes (fmla vN.4s), the instruction
# of their register-tiled inner loops.
#   check_neon.sh <objdump> <kernels build dir>
set -euo pipefail
objdump="$1"
dir="$2"
checked=0
# A build for one target names its objects <kernel>.o, one for several <kernel>-<target>.o.
shopt -s nullglob
for object in "$dir"/attention_f32*_cpu_fused{,-arm-64-linux*}.o \
    "$dir"/attention_f32*_cpu_tiled{,-arm-64-linux*}.o; do
    count=$("$objdump" -d --no-show-raw-insn "$object" | grep -cE 'fmla[[:space:]]+v[0-9]+\.4s' || true)
    if [ "$count" -lt 16 ]; then
        echo "FAIL: $(basename "$object"): $count NEON fmla instructions" >&2
        exit 1
    fi
    echo "$(basename "$object"): $count fmla vN.4s"
    checked=$((checked + 1))
done
if [ "$checked" -eq 0 ]; then
    echo "FAIL: no ARM64 kernel objects found in $dir" >&2
    exit 1
fi
echo "ok: $checked kernel objects use NEON FMAs"
