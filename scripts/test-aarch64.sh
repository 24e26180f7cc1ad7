#!/usr/bin/env bash
# The ARM64 build and its tests: set up (the cross compiler and qemu-user), build natively first
# (the generators run on this machine), cross-build with the aarch64 preset, and run the tests
# under qemu-aarch64.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --aarch64
./scripts/build.sh release
cmake --preset aarch64
cmake --build --preset aarch64 -j "$(nproc)"
ctest --preset aarch64
