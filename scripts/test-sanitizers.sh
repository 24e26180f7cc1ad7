#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer: set up, build the
# release build (whose kernels and generators the sanitizer build reuses: the code generator is
# the same, and only the runtime, tools and tests need the sanitizer flags), configure and build
# the asan-ubsan preset (clang-14; runtime, tools, tests and the fuzz targets instrumented) into
# build/asan-ubsan, run every test at the machine's best CPU level.
# Any sanitizer report aborts the test that made it, so a clean run is a passing ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --sanitizers
./scripts/build.sh release
cmake --preset asan-ubsan
cmake --build --preset asan-ubsan -j "$(nproc)"
ctest --preset asan-ubsan
