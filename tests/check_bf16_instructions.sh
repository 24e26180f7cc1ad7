#!/usr/bin/env bash
# Checks the instructions of the bfloat16 kernels compiled for AVX512-BF16 (ATTNGEN_BF16_TARGETS):
# their block path's Q K^T and P V must be vdpbf16ps on whole 512-bit registers (the register
# tile of the paired scores issues a dozen per step of two features, that of the paired P V 16
# per pair of keys), the weights of P V must be rounded to bfloat16 by vcvtne2ps2bf16, and the
# same kernels' entries for
# the other targets, which run on CPUs without the instruction, must hold none. The
# AVX512-BF16 entries must hold nothing else of Sapphire Rapids, whose CPU model Halide 14 hands
# LLVM for them: the runtime runs them on AMD's Zen 4 and Zen 5, which have AVX512-BF16 but not
# AVX512-FP16 (vmovw, v...ph, v...sh) or AMX (tile..., tdp...): a vmovw there, from a
# transposition of 16-bit queries, was a SIGILL on Zen 5 (2026-12-07).
#   check_bf16_instructions.sh <objdump> <kernels build dir>
set -euo pipefail
objdump="$1"
dir="$2"
checked=0
shopt -s nullglob
for object in "$dir"/attention_bf16*_cpu_fused-*.o; do
    name=$(basename "$object")
    count=$("$objdump" -d --no-show-raw-insn "$object" |
        grep -cE 'vdpbf16ps[[:space:]]+[^,]*,%zmm[0-9]+,%zmm[0-9]+' || true)
    case "$name" in
    *avx512_sapphirerapids*)
        if [ "$count" -lt 12 ]; then
            echo "FAIL: $name: $count vdpbf16ps on zmm registers" >&2
            exit 1
        fi
        rounded=$("$objdump" -d --no-show-raw-insn "$object" | grep -c 'vcvtne2ps2bf16' || true)
        if [ "$rounded" -lt 1 ]; then
            echo "FAIL: $name: the weights of P V are not rounded by vcvtne2ps2bf16" >&2
            exit 1
        fi
        # The mnemonic is objdump's second field; F16C's vcvtps2ph is the one *ph allowed.
        others=$("$objdump" -d --no-show-raw-insn "$object" | awk '{print $2}' |
            grep -E '^(vmovw|vmovsh|tile[a-z]+|tdp[a-z0-9]+|v[a-z0-9]+(ph|sh|phx|psx))$' |
            grep -vx 'vcvtps2ph' | sort | uniq -c || true)
        if [ -n "$others" ]; then
            echo "FAIL: $name holds instructions that AMD's AVX512-BF16 CPUs lack:" >&2
            echo "$others" >&2
            exit 1
        fi
        checked=$((checked + 1))
        ;;
    *)
        if [ "$count" -ne 0 ]; then
            echo "FAIL: $name runs on CPUs without AVX512-BF16 and holds $count vdpbf16ps" >&2
            exit 1
        fi
        ;;
    esac
    echo "$name: $count vdpbf16ps"
done
if [ "$checked" -eq 0 ]; then
    echo "FAIL: no bfloat16 kernel object for AVX512-BF16 found in $dir" >&2
    exit 1
fi
echo "ok: $checked bfloat16 kernel objects use vdpbf16ps"
