#!/usr/bin/env bash
# The whole test suite: set up, build, run every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/build.sh release
ctest --preset release
