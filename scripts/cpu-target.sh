#!/usr/bin/env bash
# Prints the most capable of the build's default x86-64 Halide targets (CMakeLists.txt) that
# this machine's CPU runs. A build whose kernels have one target only, as the sanitizer build's
# do, must take one the machine runs: with no other target to fall back on, a kernel compiled
# for a missing instruction set dies of an illegal instruction (a Zen 3 EPYC has AVX2 but no
# AVX-512). The feature names are those of /proc/cpuinfo; Halide's avx512_skylake needs the
# F, CD, VL, BW and DQ parts of AVX-512.
set -euo pipefail
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() {
    for feature in "$@"; do
        [[ "$flags" == *" $feature "* ]] || return 1
    done
}
if has avx512f avx512cd avx512vl avx512bw avx512dq avx2 avx fma f16c sse4_1; then
    echo x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41
elif has avx2 avx fma f16c sse4_1; then
    echo x86-64-linux-avx-avx2-f16c-fma-sse41
else
    echo x86-64-linux-sse41
fi
