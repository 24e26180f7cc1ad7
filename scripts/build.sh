#!/usr/bin/env bash
# Installs the Debian packages (once), configures and builds attngen in build/ with the preset
# given as $1 (default: release). Used by demo.sh, test.sh and CI.
set -euo pipefail
cd "$(dirname "$0")/.."

preset="${1:-release}"
./scripts/setup.sh
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
