#!/usr/bin/env bash
# The installed package as another project sees it: installs build/release (built by
# scripts/test.sh or scripts/build.sh) to the staging prefix build/stage, builds and runs
# examples/downstream against that prefix only (on x86 also with the runtime held to AVX2 and
# SSE4.1, so that the narrower code of its multi-target kernel runs), and checks
# attngen_add_kernel's option errors.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build/release/build.ninja ]; then
    echo "test-downstream: build/release is not configured; run ./scripts/build.sh first" >&2
    exit 1
fi
cmake --build build/release -j "$(nproc)"

# A fresh prefix each time, so that nothing from an earlier install hides a missing file.
rm -rf build/stage build/downstream-example
cmake --install build/release --prefix build/stage > /dev/null
prefix="$PWD/build/stage"

# Only the prefix is on CMake's search path; the example never sees this source or build tree.
cmake -S examples/downstream -B build/downstream-example -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix"
cmake --build build/downstream-example -j "$(nproc)"
ctest --test-dir build/downstream-example --output-on-failure
# The tuned kernel holds code for each of the installed build's targets, tuned only for the first;
# on x86 the narrower ones run when the runtime is told to stop below the machine's best.
if [ "$(uname -m)" = x86_64 ]; then
    for isa in avx2 sse41; do
        echo "test-downstream: the example with ATTNGEN_MAX_CPU_ISA=$isa"
        ATTNGEN_MAX_CPU_ISA=$isa ctest --test-dir build/downstream-example --output-on-failure
    done
fi

tests/package/check_kernel_options.sh "$prefix/lib/cmake/attngen" build/downstream-options
