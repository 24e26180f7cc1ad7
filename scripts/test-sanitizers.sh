#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer: set up, configure
# and build the asan-ubsan preset (clang-14; runtime, tools, tests, generators and the fuzz
# targets instrumented; kernels for one x86 target, the most capable this machine runs) into
# build/asan-ubsan, run every test.
# Any sanitizer report aborts the test that made it, so a clean run is a passing ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --sanitizers
cmake --preset asan-ubsan -DATTNGEN_TARGETS="$(./scripts/cpu-target.sh)"
cmake --build --preset asan-ubsan -j "$(nproc)"
ctest --preset asan-ubsan
